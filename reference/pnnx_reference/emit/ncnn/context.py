"""State shared by the lowerings: emitted layers, blob naming and the torch -> ncnn shape rules.

An ncnn Mat carries up to 4 dims (w, h, d, c) plus a batch count `n`: every layer that does
not handle the batch itself runs once per sample (ncnn's Net loops over `n`), and a blob with
n = 1 is broadcast to every sample of the others. So each operand is carried with a batch axis:
the torch dim that ncnn holds in `n` (see batch.py, which decides it per operator), or None
when the blob holds every torch dim. A lowering sees its operands per sample: `shape(operand)`
is the torch shape without that dim, and a torch `dim=d` becomes ncnn axis `axis(operand, d)`
counted outermost-first (the order upstream writes for Concat, Slice, Crop, Softmax,
Reduction (5=1), Squeeze...). A lowering that would work along the batch axis raises
`AlongBatch` (through `axis`), and the driver lowers the operator again with every operand
holding all its dims.

A lowering that cannot lower its operator raises `pnnx_reference.errors.Unsupported`."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from ...errors import AlongBatch, Unsupported
from ...ir import Graph, Operand, Operator
from .layers import Layer, Weight

FLT_MAX = 3.40282347e38
MAX_BLOB_RANK = 4  # ncnn Mat: w, h, d, c
NO_BATCH = 233     # ncnn's batch index for "no batch axis" (ncnn.Mat(..., batch_index=233))


# shape-only operators (reshape family), lowered by families/shape.py
RESHAPES = ("Tensor.view", "Tensor.reshape", "torch.reshape", "torch.flatten", "Tensor.flatten", "nn.Flatten",
            "nn.Unflatten", "torch.unflatten", "Tensor.unflatten", "Tensor.view_as", "Tensor.reshape_as",
            "torch.squeeze", "Tensor.squeeze", "torch.unsqueeze", "Tensor.unsqueeze", "torch.ravel")


class Context:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.layers: list[Layer] = []
        self.aliases: dict[str, str] = {}      # operand name -> blob that carries it
        self.blob_names: dict[str, str] = {}   # operand name -> ncnn blob name (in0, ...)
        self.materialized: dict[tuple[str, int | None], str] = {}  # (constant, batch axis) -> MemoryData blob
        self.flat_views: dict[str, str] = {}   # (c,1,1) operand -> blob holding the same data as (c)
        self.axes: dict[str, int | None] = {}  # operand name -> batch axis of the blob carrying it
        self.views: dict[str, tuple[str | None, int | None]] = {}  # the current operator's inputs as it reads them
        self.converted: dict[tuple[str, int | None], str] = {}     # (operand, batch axis) -> converted blob
        self.int_bits: set[str] = set()        # integer graph inputs fed as int32 bits (Embed's indices)
        self._counters: Counter = Counter()
        self._temps = 0
        # set by the driver: lowers a stand-alone operator (a composite's part) as it lowers the
        # graph's, with batch axes planned and inputs converted
        self.lower_operator = None

    # --- checkpoints (an operator lowered again without batch axes) --------------------
    def checkpoint(self):
        return (len(self.layers), dict(self.aliases), dict(self.materialized), dict(self.flat_views),
                dict(self.axes), dict(self.converted), Counter(self._counters), self._temps)

    def restore(self, state) -> None:
        n, aliases, materialized, flat_views, axes, converted, counters, temps = state
        del self.layers[n:]
        self.aliases, self.materialized, self.flat_views = aliases, materialized, flat_views
        self.axes, self.converted, self._counters, self._temps = axes, converted, counters, temps
        self.views = {}

    # --- blobs ------------------------------------------------------------------------
    def blob(self, operand: Operand) -> str:
        """The ncnn blob carrying `operand` (as the current operator reads it); a constant
        becomes a MemoryData on first use."""
        view = self.views.get(operand.name)
        if view is not None and view[0] is not None:
            return view[0]
        name = operand.name
        while name in self.aliases:
            name = self.aliases[name]
        producer = operand.producer
        if producer is not None and producer.type == "pnnx.Attribute" and name == operand.name:
            return self._memorydata(operand, producer)
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

    def _memorydata(self, operand: Operand, producer: Operator) -> str:
        """The constant as a MemoryData blob without its batch axis (which has size 1: the one
        blob is broadcast to every sample)."""
        key = (operand.name, self.batch_axis(operand))
        if key in self.materialized:
            return self.materialized[key]
        data = self.attribute_data(producer)
        shape = self.shape(operand)
        if len(shape) > 4:
            raise Unsupported(f"constant {operand.name} has rank {len(shape)} > 4 after dropping batch")
        params = dims_params(shape) if shape else {0: 1}
        # the first form keeps the operand's name; a constant read with another batch axis too
        # gets a second MemoryData
        taken = any(name == operand.name for name, _ in self.materialized)
        blob = f"{operand.name}_b{NO_BATCH if key[1] is None else key[1]}" if taken else operand.name
        self.emit("MemoryData", producer.name.replace(".", "_"), [], [blob], params,
                  [Weight(data.astype(np.float32).reshape(-1), tagged=False)])
        self.materialized[key] = blob
        return blob

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

    def batch_axis(self, operand: Operand) -> int | None:
        """The torch dim of `operand` that ncnn carries as the Mat batch (None: every dim is a
        blob dim). A constant nobody planned for drops a leading 1 (broadcast to every sample)."""
        view = self.views.get(operand.name)
        if view is not None:
            return view[1]
        if operand.name in self.axes:
            return self.axes[operand.name]
        shape = operand.shape or []
        if self.constant(operand) is not None:
            return 0 if len(shape) > 1 and shape[0] == 1 else None
        return None

    def shape(self, operand: Operand) -> list[int]:
        """ncnn shape of one sample (the batch axis dropped), outermost first."""
        shape = self.torch_shape(operand)
        b = self.batch_axis(operand)
        if b is None:
            return shape
        # a 0-d sample (full reduction) is a 1-element blob, as upstream writes it
        return shape[:b] + shape[b + 1:] or [1]

    def has_batch(self, operand: Operand) -> bool:
        return self.batch_axis(operand) is not None

    def rank(self, operand: Operand) -> int:
        return len(self.shape(operand))

    def axis(self, operand: Operand, dim: int) -> int:
        """ncnn axis (outermost first, batch dropped) of torch `dim` on `operand`."""
        torch_rank = len(self.torch_shape(operand))
        d = dim + torch_rank if dim < 0 else dim
        if not 0 <= d < torch_rank:
            raise Unsupported(f"dim {dim} out of range for rank {torch_rank}")
        b = self.batch_axis(operand)
        if b is None:
            return d
        if d == b:
            raise AlongBatch(f"works along the batch axis (dim {dim})")
        return d - 1 if d > b else d


def dims_params(shape: list[int]) -> dict[int, int]:
    """ncnn w/h/d/c params (0, 1, 11, 2) for a shape given outermost first."""
    if sum(int(d) < 0 for d in shape) > 1:  # ncnn infers one -1 only: the others would be read as -1 too
        raise Unsupported(f"a reshape to {tuple(shape)} with several sizes that follow the input "
                          "is not lowered here")
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
