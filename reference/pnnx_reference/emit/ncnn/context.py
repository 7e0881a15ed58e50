"""State shared by the lowerings: emitted layers, blob naming and the torch -> ncnn shape rules.

ncnn blobs have no batch axis: torch dim 0 of every activation is the batch and must be 1
(it is dropped), and a torch `dim=d` becomes ncnn axis `d-1` counted outermost-first, the
order upstream writes for Concat, Slice, Crop, Softmax, Reduction (5=1), Squeeze...
Constants (pnnx.Attribute) without a leading 1 keep all their dims (no batch axis).

A graph whose inputs do not all lead with 1 is lowered batchless (like upstream's batch index
233): every operand keeps all its dims, so only the lowerings registered with
`batchless=True` (those that do not need an (N, C, ...) layout) can be lowered.

A lowering that cannot lower its operator raises `pnnx_reference.errors.Unsupported`."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from ...errors import Unsupported
from ...ir import Graph, Operand, Operator
from .layers import Layer, Weight

FLT_MAX = 3.40282347e38
MAX_BLOB_RANK = 4  # ncnn Mat: w, h, d, c


# shape-only operators: one that leaves dim 0 other than 1 (flatten(x), squeeze(x) of a batch-1
# tensor) has folded the batch away, and its result keeps all its dims (see has_batch)
RESHAPES = ("Tensor.view", "Tensor.reshape", "torch.reshape", "torch.flatten", "Tensor.flatten", "nn.Flatten",
            "nn.Unflatten", "torch.unflatten", "Tensor.unflatten", "Tensor.view_as", "Tensor.reshape_as",
            "torch.squeeze", "Tensor.squeeze", "torch.unsqueeze", "Tensor.unsqueeze", "torch.ravel")


def is_batchless(input_shapes) -> bool:
    """True when some input does not lead with a batch of 1 (nor a dynamic one): ncnn then
    carries every dim of every blob and dim 0 is an ordinary axis."""
    return any(shape and shape[0] not in (1, -1) for shape in input_shapes if shape is not None)


class Context:
    def __init__(self, graph: Graph, batchless: bool = False) -> None:
        self.graph = graph
        self.batchless = batchless
        self.layers: list[Layer] = []
        self.aliases: dict[str, str] = {}      # operand name -> blob that carries it
        self.blob_names: dict[str, str] = {}   # operand name -> ncnn blob name (in0, ...)
        self.materialized: set[str] = set()    # pnnx.Attribute operands already a MemoryData
        self.flat_views: dict[str, str] = {}   # (c,1,1) operand -> blob holding the same data as (c)
        self._unbatched: dict[str, bool] = {}
        self._counters: Counter = Counter()
        self._temps = 0

    # --- blobs ------------------------------------------------------------------------
    def blob(self, operand: Operand) -> str:
        """The ncnn blob carrying `operand`; a constant becomes a MemoryData on first use."""
        name = operand.name
        while name in self.aliases:
            name = self.aliases[name]
        producer = operand.producer
        if producer is not None and producer.type == "pnnx.Attribute" and name == operand.name:
            self._memorydata(operand, producer)
        return self.blob_names.get(name, name)

    def reshaped(self, blob: str, shape: list[int], base: str) -> str:
        """`blob` viewed as ncnn `shape`, in a new temp blob named after `base`."""
        if len(shape) > MAX_BLOB_RANK:
            raise Unsupported(f"a rank-{len(shape)} blob (ncnn blobs have at most {MAX_BLOB_RANK} dims)")
        target = self.temp(base)
        if len(shape) == 1:
            self.emit("Flatten", "flatten", [blob], [target])
        else:
            self.emit("Reshape", "reshape", [blob], [target], dims_params(shape))
        return target

    def alias(self, out: Operand, source: Operand) -> None:
        """`out` is `source` unchanged (a no-op): consumers read the source's blob."""
        self.aliases[out.name] = self.blob(source)

    def temp(self, base: str) -> str:
        self._temps += 1
        return f"{base}_t{self._temps}"

    def emit(self, type: str, prefix: str, inputs, outputs, params=None, weights=()) -> Layer:
        name = f"{prefix}_{self._counters[prefix]}"
        self._counters[prefix] += 1
        layer = Layer(type, name, list(inputs), list(outputs), dict(params or {}), list(weights))
        self.layers.append(layer)
        return layer

    def _memorydata(self, operand: Operand, producer: Operator) -> None:
        if operand.name in self.materialized:
            return
        data = self.attribute_data(producer)
        shape = self.shape(operand)
        if len(shape) > 4:
            raise Unsupported(f"constant {operand.name} has rank {len(shape)} > 4 after dropping batch")
        params = dims_params(shape) if shape else {0: 1}
        self.emit("MemoryData", producer.name.replace(".", "_"), [], [operand.name], params,
                  [Weight(data.astype(np.float32).reshape(-1), tagged=False)])
        self.materialized.add(operand.name)

    # --- constants ----------------------------------------------------------------------
    @staticmethod
    def attribute_data(op: Operator) -> np.ndarray:
        attr = next(iter(op.attrs.values()), None)
        if attr is None:
            raise Unsupported(f"pnnx.Attribute {op.name} has no data")
        if attr.dtype not in ("f32", "f64", "f16", "i32", "i64", "i16", "i8", "u8", "bool"):
            raise Unsupported(f"constant {op.name} of dtype {attr.dtype} has no ncnn form")
        return attr.to_numpy()

    def constant_input(self, op: Operator, name: str, position: int) -> np.ndarray | None:
        """The float32 value of input `name` (or the one at `position`, for a graph without
        input names), None when there is no such input; refused when computed at run time."""
        operand = op.input(name, position)
        if operand is None:
            return None
        value = self.constant(operand)
        if value is None:
            raise Unsupported(f"{name} is not a constant")
        return value.astype(np.float32)

    def constant(self, operand: Operand) -> np.ndarray | None:
        """The value of an operand produced by pnnx.Attribute, or None."""
        producer = operand.producer
        if producer is None or producer.type != "pnnx.Attribute":
            return None
        return self.attribute_data(producer)

    # --- shapes and axes ---------------------------------------------------------------
    def torch_shape(self, operand: Operand) -> list[int]:
        if operand.shape is None:
            raise Unsupported(f"shape of operand {operand.name} is unknown")
        return list(operand.shape)

    def shape(self, operand: Operand) -> list[int]:
        """ncnn shape (batch dropped), outermost first."""
        shape = self.torch_shape(operand)
        if not self.has_batch(operand):
            return shape
        if not shape:
            return [1]  # a 0-d result (full reduction) is a 1-element blob, as upstream writes it
        if shape[0] not in (1, -1):
            raise Unsupported(f"operand {operand.name} has batch size {shape[0]}: ncnn blobs have no "
                              "batch axis, only batch 1 can be lowered")
        return shape[1:]

    def has_batch(self, operand: Operand) -> bool:
        """Activations always have the batch dim; a constant only when it leads with a 1."""
        if self.batchless:
            return False
        producer = operand.producer
        if producer is not None and producer.type == "pnnx.Attribute":
            shape = operand.shape or []
            return len(shape) > 1 and shape[0] == 1
        return not self._batch_folded(operand)

    def batch_folded(self, op: Operator) -> list[Operand]:
        """Activations of `op` whose batch-1 axis a reshape folded away (dim 0 is data)."""
        return [o for o in (*op.inputs, *op.outputs)
                if not self.batchless and o.shape and o.producer is not None
                and o.producer.type != "pnnx.Attribute" and self._batch_folded(o)]

    def _batch_folded(self, operand: Operand) -> bool:
        """Whether a shape-only operator upstream of `operand` folded the batch-1 axis into its
        dim 0 (e.g. flatten(x) -> (192,)); elementwise successors inherit that."""
        if operand.name in self._unbatched:
            return self._unbatched[operand.name]
        shape, producer = operand.shape, operand.producer
        folded = False
        if shape and shape[0] not in (1, -1) and producer is not None:
            if producer.type in RESHAPES:
                folded = True
            else:
                folded = any(i.shape and i.shape[0] == shape[0] and self._batch_folded(i) for i in producer.inputs)
        self._unbatched[operand.name] = folded
        return folded

    def rank(self, operand: Operand) -> int:
        return len(self.shape(operand))

    def axis(self, operand: Operand, dim: int) -> int:
        """ncnn axis (outermost first, batch dropped) of torch `dim` on `operand`."""
        torch_rank = len(self.torch_shape(operand))
        d = dim + torch_rank if dim < 0 else dim
        if not 0 <= d < torch_rank:
            raise Unsupported(f"dim {dim} out of range for rank {torch_rank}")
        if not self.has_batch(operand):
            return d
        if d == 0:
            raise Unsupported(f"works along the batch axis (dim {dim}): ncnn blobs have no batch axis")
        return d - 1


def dims_params(shape: list[int]) -> dict[int, int]:
    """ncnn w/h/d/c params (0, 1, 11, 2) for a shape given outermost first."""
    keys = {1: (0,), 2: (1, 0), 3: (2, 1, 0), 4: (2, 11, 1, 0)}[len(shape)]
    return {k: int(v) for k, v in zip(keys, shape)}


def as_list(value, n: int) -> list:
    """An int-or-tuple torch argument as a list of n values."""
    if isinstance(value, (list, tuple)):
        return list(value) * n if len(value) == 1 else list(value)
    return [value] * n


def permutation_order_type(perm: list[int]) -> int:
    """Permute's order_type: the index of `perm` in lexicographic order (checked against ncnn
    in the tests)."""
    return list(itertools.permutations(range(len(perm)))).index(tuple(perm))


def required_inputs(op: Operator, *names: str) -> list[Operand]:
    """The inputs bound to `names` (positional when the capture recorded no names); refused
    when one is missing."""
    found = [op.input(name, i) for i, name in enumerate(names)]
    missing = [name for name, operand in zip(names, found) if operand is None]
    if missing:
        raise Unsupported(f"{op.type} without its {', '.join(missing)} operand")
    return found


def param(op: Operator, key: str, default=None):
    value = op.params.get(key, default)
    return default if value is None and default is not None else value


def single_dim(op: Operator, default: int = 0) -> int:
    """The `dim` param as one int; several dims at once are refused."""
    value = param(op, "dim", default)
    if isinstance(value, (list, tuple)):
        raise Unsupported("several dims at once are not lowered")
    return int(value)
