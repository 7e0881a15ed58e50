"""OnnxBuilder: the state one export accumulates (nodes, initializers, graph inputs/outputs,
model-local functions) plus the small helpers every lowering uses (operand names, constants,
weights, params)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from ...errors import Unsupported
from ...ir import Attribute, Graph, Operand, Operator
from .dtypes import COMPLEX_PARTS, FLOATS, numpy_type, onnx_type

INT64_MAX = 2**63 - 1  # an ONNX Slice bound past either end
# A weight of at least this many bytes keeps its data out of the ModelProto until the file is
# written (a Payload): the model in memory is a skeleton and no weight is copied whole. Below
# it the data is inline, so the checker's shape inference still sees the values of the small
# tensors that can be shapes, axes or indices.
PAYLOAD_BYTES = 64 * 1024
CHUNK_BYTES = 4 << 20  # a payload is converted and written this much at a time


@dataclass
class Payload:
    """The data of an initializer left out of the ModelProto: `array` (a view of the graph's
    weight, possibly strided, e.g. a transpose) stored as `dtype` (float16 with fp16)."""
    array: np.ndarray
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(self.array.size) * self.dtype.itemsize

    def chunks(self, max_bytes: int = CHUNK_BYTES) -> Iterator[memoryview]:
        """The stored bytes (C order, little-endian) a few MB at a time."""
        array = self.array.reshape(1) if self.array.ndim == 0 else self.array
        if array.flags.c_contiguous:
            array = array.reshape(-1)
        rows = max(1, max_bytes // max(1, self.dtype.itemsize * (array.size // max(1, len(array)))))
        dtype = self.dtype.newbyteorder("<")
        for start in range(0, len(array), rows):
            part = array[start:start + rows]
            block = _c_order_copy(part, dtype) if part.ndim == 2 else np.ascontiguousarray(part, dtype=dtype)
            yield memoryview(block).cast("B")

    def tobytes(self) -> bytes:
        return b"".join(self.chunks())


TILE = 64


def _c_order_copy(part: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A C-ordered copy of a 2-D view stored as `dtype`. A transposed weight (a Linear's, for
    MatMul) is first cast in its memory order (narrow when fp16), then transposed a square tile
    at a time, so that both reads and writes stay in cache: 1.3 GB/s of float32 read on weights
    2048 wide, where one strided copy reads 0.4-0.6 GB/s. (torch's copy is a little faster, but
    its temporaries fragment glibc's heap: 3 times the extra memory.)"""
    if part.flags.c_contiguous or abs(part.strides[0]) >= abs(part.strides[1]):
        return np.ascontiguousarray(part, dtype=dtype)
    narrow = np.ascontiguousarray(part.T, dtype=dtype).T
    out = np.empty(part.shape, dtype)
    for i in range(0, part.shape[0], TILE):
        for j in range(0, part.shape[1], TILE):
            out[i:i + TILE, j:j + TILE] = narrow[i:i + TILE, j:j + TILE]
    return out


class OnnxBuilder:
    def __init__(self, graph: Graph, opset: int, fp16: bool) -> None:
        self.graph, self.opset, self.fp16 = graph, opset, fp16
        self.nodes: list = []
        self.initializers: list = []
        self.payloads: dict[str, Payload] = {}   # initializer name -> its data, left out of the proto
        self.inputs: list = []
        self.outputs: list = []
        self.functions: list = []                # FunctionProtos of moduleop bodies
        self.domains: dict[str, int] = {}        # their domains, for opset_import
        self.op: Operator | None = None          # the operator being lowered
        self.complex_values: set[str] = set()    # graph inputs/outputs that are complex
        self._used = {o.name for o in graph.operands} | {op.name for op in graph.ops}
        self._consts: dict[tuple, str] = {}
        self._counter = itertools.count()

    # --- undo, for an operator that turns out unsupported half-way ---------------------------
    def checkpoint(self) -> tuple[int, ...]:
        return len(self.nodes), len(self.initializers), len(self.inputs), len(self.outputs), len(self.functions)

    def rollback(self, mark: tuple[int, ...]) -> None:
        del self.nodes[mark[0]:], self.initializers[mark[1]:]
        del self.inputs[mark[2]:], self.outputs[mark[3]:], self.functions[mark[4]:]
        kept = {i.name for i in self.initializers}
        self._consts = {k: v for k, v in self._consts.items() if v in kept}
        self.payloads = {k: v for k, v in self.payloads.items() if k in kept}

    # --- names --------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        name = hint
        while name in self._used:
            name = f"{hint}_{next(self._counter)}"
        self._used.add(name)
        return name

    def x(self, op: Operator, i: int = 0) -> str:
        if i >= len(op.inputs):
            raise Unsupported(f"expected at least {i + 1} inputs, got {len(op.inputs)}")
        return op.inputs[i].name

    def y(self, op: Operator, i: int = 0) -> str:
        if i >= len(op.outputs):
            raise Unsupported(f"expected at least {i + 1} outputs, got {len(op.outputs)}")
        return op.outputs[i].name

    # --- nodes --------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[str], outputs=1, **attrs):
        """Append one node. `outputs`: a name, a list of names, or a count of fresh names.
        Returns the output name (one output) or the list of names."""
        if isinstance(outputs, int):
            base = self.op.name if self.op is not None else "pnnx"
            outputs = [self.fresh(f"{base}_{op_type.lower()}") for _ in range(outputs)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        base = self.op.name if self.op is not None else "pnnx"
        name = self.fresh(f"{base}/{op_type}")
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs), name=name, **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    # --- constants and weights --------------------------------------------------------------
    def const(self, value, dtype: str = "i64", hint: str = "const") -> str:
        """A small constant initializer (shapes, axes, scalars); deduplicated, never fp16."""
        array = np.asarray(value, dtype=numpy_type(dtype))
        key = (dtype, array.shape, array.tobytes())
        if key not in self._consts:
            name = self.fresh(hint)
            self.initializers.append(numpy_helper.from_array(array, name))
            self._consts[key] = name
        return self._consts[key]

    def is_const(self, name: str) -> bool:
        """`name` is an initializer made by const() (not a weight)."""
        return name in self._consts.values()

    def weight(self, array: np.ndarray, hint: str, out: str | None = None) -> str:
        """A weight initializer. With fp16, float weights are stored as float16 and a Cast
        restores the compute dtype, so inputs, outputs and arithmetic keep their types.
        `array` may be a view (a transpose, a slice of the graph's weight): nothing is copied
        here; a large one is converted when the file is written (Payload)."""
        array = np.asarray(array)
        wide = array.dtype in (np.float32, np.float64)
        if not (self.fp16 and wide):
            name = out or self.fresh(hint)
            self._initializer(array, array.dtype, name)
            return name
        stored = self.fresh(hint if out is None else f"{hint}_fp16")
        self._initializer(array, np.dtype(np.float16), stored)
        to = TensorProto.FLOAT if array.dtype == np.float32 else TensorProto.DOUBLE
        return self.node("Cast", [stored], out or self.fresh(f"{hint}_cast"), to=to)

    def _initializer(self, array: np.ndarray, dtype: np.dtype, name: str) -> None:
        payload = Payload(array, np.dtype(dtype))
        if payload.nbytes < PAYLOAD_BYTES or array.dtype.kind not in "biuf":
            stored = np.asarray(array, order="C")  # (ascontiguousarray makes 0-d 1-d)
            self.initializers.append(numpy_helper.from_array(stored.astype(dtype, copy=False), name))
            return
        tensor = TensorProto()  # what numpy_helper.from_array sets, but raw_data
        tensor.dims.extend(array.shape)
        tensor.name = name
        tensor.data_type = helper.np_dtype_to_tensor_dtype(payload.dtype)
        self.initializers.append(tensor)
        self.payloads[name] = payload

    def initializer_array(self, tensor: TensorProto) -> np.ndarray:
        """The value of an initializer this builder made (its payload's array when left out)."""
        payload = self.payloads.get(tensor.name)
        return numpy_helper.to_array(tensor) if payload is None else np.asarray(payload.array, payload.dtype)

    def attr(self, op: Operator, key: str) -> np.ndarray:
        if key not in op.attrs:
            raise Unsupported(f"missing weight @{key}")
        attribute = op.attrs[key]
        if attribute.dtype in ("bf16", "c32"):
            raise Unsupported(f"weight @{key} has dtype {attribute.dtype}")
        return attribute.to_numpy()

    def attr_weight(self, op: Operator, key: str, array: np.ndarray | None = None) -> str:
        """Initializer for op.attrs[key] (or an array derived from it), named `<op>.<key>`."""
        return self.weight(self.attr(op, key) if array is None else array, f"{op.name}.{key}")

    # --- graph boundary ------------------------------------------------------------------------
    def value_info(self, name: str, operand: Operand):
        """A graph input or output; a complex one is real with a trailing axis of 2."""
        shape = None
        if operand.shape is not None:
            shape = [f"{name}_d{i}" if d < 0 else d for i, d in enumerate(operand.shape)]
        dtype = operand.dtype
        if dtype in COMPLEX_PARTS:
            self.complex_values.add(name)
            dtype, shape = COMPLEX_PARTS[dtype], None if shape is None else shape + [2]
        return helper.make_tensor_value_info(name, onnx_type(dtype), shape)

    # --- params and shapes -------------------------------------------------------------------
    @staticmethod
    def shape(operand: Operand) -> list[int]:
        if operand.shape is None:
            raise Unsupported(f"shape of {operand.name} is unknown")
        return list(operand.shape)

    def rank(self, operand: Operand) -> int:
        return len(self.shape(operand))

    @staticmethod
    def dtype(operand: Operand) -> str:
        if operand.dtype is None:
            raise Unsupported(f"dtype of {operand.name} is unknown")
        return operand.dtype

    def is_float(self, operand: Operand) -> bool:
        return self.dtype(operand) in FLOATS


def ints(value, n: int, name: str = "value") -> list[int]:
    """An int or int list param as exactly n ints (`3` -> [3, 3])."""
    if isinstance(value, bool) or value is None:
        raise Unsupported(f"{name}={value!r} is not an int or int list")
    if isinstance(value, int):
        return [value] * n
    values = [int(v) for v in value]
    if len(values) == 1 and n > 1:
        return values * n
    if len(values) != n:
        raise Unsupported(f"{name}={value!r} needs {n} values")
    return values


def static(shape, what: str) -> list[int]:
    """`shape` as a list, refused unless every dim is known."""
    if any(d < 0 for d in shape):
        raise Unsupported(f"needs static {what}")
    return list(shape)


def constant_attribute(operand: Operand, what: str = "weight") -> Attribute:
    """The tensor behind a pnnx.Attribute operand, else Unsupported."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Attribute" or len(producer.attrs) != 1:
        raise Unsupported(f"{what} {operand.name} is not a constant")
    return next(iter(producer.attrs.values()))


def int_list(value) -> list[int]:
    if value is None:
        return []
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


def axis(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim
