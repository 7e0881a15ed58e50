"""The PNNX graph IR: a small, readable data model shared by every frontend, pass and emitter.

A `Graph` is an ordered list of `Operator`s (topological order, as in pnnx.param) and the
`Operand`s (tensors) that connect them. Operators carry typed parameters (plain Python
values, see `ParamValue`) and attributes (weights: raw bytes with a shape and a dtype).

Parameter kinds map to Python values:
    None -> None, bool -> bool, int -> int, float -> float (stored as float32 on disk),
    str -> str, int list -> list[int], float list -> list[float], str list -> list[str],
    complex -> complex, complex list -> list[complex].
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import Iterable, Union

import numpy as np

from .errors import StaleWeight

ParamValue = Union[None, bool, int, float, str, complex, list]
UNKNOWN_DIM = -1  # a dimension known only at run time (written as `?` in pnnx.param's shape annotations)
NULL_DTYPE = "null"  # an attribute with no data (e.g. ncnn's fp16 flag placeholder)

@dataclass(frozen=True)
class DType:
    suffix: str         # as written in pnnx.param: f32, i64, ...
    numpy: str          # numpy dtype name used in generated code and when decoding pnnx.bin
    torch: str          # torch dtype as the generated Python writes it
    itemsize: int
    is_integer: bool    # upstream feeds these with torch.randint in test_inference()


DTYPES: dict[str, DType] = {
    d.suffix: d
    for d in (
        DType("f32", "float32", "torch.float", 4, False),
        DType("f64", "float64", "torch.double", 8, False),
        DType("f16", "float16", "torch.half", 2, False),
        DType("bf16", "bfloat16", "torch.bfloat16", 2, False),
        DType("i32", "int32", "torch.int", 4, True),
        DType("i64", "int64", "torch.long", 8, True),
        DType("i16", "int16", "torch.short", 2, True),
        DType("i8", "int8", "torch.int8", 1, True),
        DType("u8", "uint8", "torch.uint8", 1, True),
        DType("bool", "bool", "torch.bool", 1, True),
        DType("c64", "complex64", "torch.complex64", 8, False),
        DType("c128", "complex128", "torch.complex128", 16, False),
        DType("c32", "complex32", "torch.complex32", 4, False),
    )
}

_TORCH_TO_SUFFIX = {
    "torch.float32": "f32", "torch.float": "f32", "torch.float64": "f64", "torch.double": "f64",
    "torch.float16": "f16", "torch.half": "f16", "torch.bfloat16": "bf16",
    "torch.int32": "i32", "torch.int": "i32", "torch.int64": "i64", "torch.long": "i64",
    "torch.int16": "i16", "torch.short": "i16", "torch.int8": "i8", "torch.uint8": "u8",
    "torch.bool": "bool", "torch.complex64": "c64", "torch.complex128": "c128",
    "torch.complex32": "c32", "torch.chalf": "c32", "torch.cfloat": "c64", "torch.cdouble": "c128",
}


# quantized tensors are annotated with their storage dtype, as upstream does (quint8 -> u8)
QUANTIZED_STORAGE = {"torch.quint8": "u8", "torch.qint8": "i8", "torch.qint32": "i32"}


def dtype_suffix_of(torch_dtype) -> str:
    """The pnnx suffix (`f32`, `i64`, ...) of a torch.dtype (or its string form)."""
    key = str(torch_dtype)
    if key not in _TORCH_TO_SUFFIX:
        raise ValueError(f"no pnnx dtype for {key}")
    return _TORCH_TO_SUFFIX[key]


def annotation_suffix_of(torch_dtype) -> str:
    """The `#` annotation suffix of a tensor: its dtype, or a quantized tensor's storage dtype."""
    return QUANTIZED_STORAGE.get(str(torch_dtype)) or dtype_suffix_of(torch_dtype)


# storage address -> the Attributes viewing that storage (see own_views_of)
_VIEWS: dict[int, weakref.WeakValueDictionary] = {}  # (by id: an Attribute is unhashable)


def _storage_key(tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def _register_view(attr: "Attribute", tensor) -> None:
    if len(_VIEWS) > 4096:  # forget storages whose views are all gone
        for key in [k for k, views in _VIEWS.items() if not views]:
            del _VIEWS[key]
    _VIEWS.setdefault(_storage_key(tensor), weakref.WeakValueDictionary())[id(attr)] = attr


def own_views_of(tensor) -> None:
    """`tensor` is about to be written in place: every Attribute viewing its memory takes a
    private copy first, so it keeps the value it was made with."""
    for attr in list(_VIEWS.pop(_storage_key(tensor), {}).values()):
        attr.own()


class Attribute:
    """A weight: raw little-endian bytes in C order, with its shape and dtype suffix.

    `data` is `bytes`, or (made by `from_torch`) a read-only `memoryview` of the tensor's own
    memory: a graph holds no copy of a model's weights, and writers stream each one from
    where it lives. Such a view reads what the tensor holds when it is read, so whoever
    writes into the tensor in place first calls `own()` (the capture does, see
    `frontends/python/inplace.py`); a write nobody announced moves the tensor's version
    counter and reading `data` then raises StaleWeight rather than return other values."""

    def __init__(self, shape: tuple[int, ...], dtype: str, data=b"") -> None:
        self.shape = shape
        self.dtype = dtype
        self.data = data

    @property
    def data(self):
        if self._source is not None and self._source._version != self._version:
            raise StaleWeight(f"a {self.dtype}{list(self.shape)} weight was changed in place after it was "
                              "captured; capture the model again")
        return self._data

    @data.setter
    def data(self, value) -> None:
        self._data, self._source, self._version = value, None, None

    @property
    def source(self):
        """The tensor whose memory `data` views (None when `data` is its own bytes)."""
        return self._source

    def own(self) -> None:
        """Take a private copy of the data (before the source tensor is written in place)."""
        if self._source is not None:
            self.data = bytes(self.data)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Attribute):
            return NotImplemented
        return (self.shape, self.dtype) == (other.shape, other.dtype) and self.data == other.data

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"Attribute(shape={self.shape!r}, dtype={self.dtype!r}, {len(self._data)} bytes)"

    def __getstate__(self) -> dict:  # pickled and deep-copied as bytes: a view cannot be
        return {"shape": self.shape, "dtype": self.dtype, "data": bytes(self.data)}

    def __setstate__(self, state: dict) -> None:
        Attribute.__init__(self, state["shape"], state["dtype"], state["data"])

    @property
    def nbytes_expected(self) -> int:
        if self.dtype == NULL_DTYPE:
            return 0
        n = 1
        for d in self.shape:
            n *= d
        return n * DTYPES[self.dtype].itemsize

    @classmethod
    def from_numpy(cls, array: np.ndarray, dtype: str | None = None) -> "Attribute":
        array = np.asarray(array, order="C")  # (ascontiguousarray makes 0-d 1-d)
        suffix = dtype or _numpy_suffix(array.dtype)
        return cls(tuple(int(d) for d in array.shape), suffix, array.astype(array.dtype.newbyteorder("<")).tobytes())

    @classmethod
    def from_torch(cls, tensor) -> "Attribute":
        """A view of `tensor`'s memory (copied only when it is not a contiguous CPU tensor)."""
        suffix = dtype_suffix_of(tensor.dtype)
        t = tensor.detach().cpu().contiguous()
        if suffix in ("bf16", "c32"):  # numpy has no such dtype: take the raw bits
            import torch

            bits = t.view(torch.int16 if suffix == "bf16" else torch.int32)
        else:
            bits = t.resolve_conj().resolve_neg()
        attr = cls(tuple(t.shape), suffix, memoryview(bits.numpy().reshape(-1)).toreadonly().cast("B"))
        attr._source, attr._version = t, t._version
        _register_view(attr, t)
        return attr

    def to_numpy(self) -> np.ndarray:
        """A read-only array over `data` (no copy)."""
        if self.dtype in ("bf16", "c32"):
            raise ValueError(f"{self.dtype} has no numpy dtype; use to_torch()")
        return np.frombuffer(self.data, dtype=np.dtype(DTYPES[self.dtype].numpy).newbyteorder("<")).reshape(self.shape)

    def to_torch(self):
        """A tensor of its own (a copy)."""
        import torch

        if self.dtype == "bf16":
            return torch.frombuffer(bytearray(self.data), dtype=torch.bfloat16).reshape(self.shape)
        if self.dtype == "c32":
            return torch.frombuffer(bytearray(self.data), dtype=torch.complex32).reshape(self.shape)
        return torch.from_numpy(self.to_numpy().copy())


def _numpy_suffix(dt: np.dtype) -> str:
    for suffix, d in DTYPES.items():
        if d.numpy == dt.name:
            return suffix
    raise ValueError(f"no pnnx dtype for numpy {dt}")


@dataclass(eq=False)
class Operand:
    """A tensor flowing between operators. `shape` uses -1 for an unknown (`?`) dimension;
    `shape is None` or `dtype is None` means no `#` annotation is written."""

    name: str
    shape: list[int] | None = None
    dtype: str | None = None
    producer: "Operator | None" = None
    consumers: list["Operator"] = field(default_factory=list)
    params: dict[str, ParamValue] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Operand({self.name!r}, {self.shape}, {self.dtype})"


@dataclass(eq=False)
class Operator:
    type: str
    name: str
    inputs: list[Operand] = field(default_factory=list)
    outputs: list[Operand] = field(default_factory=list)
    params: dict[str, ParamValue] = field(default_factory=dict)
    attrs: dict[str, Attribute] = field(default_factory=dict)
    # the keyword argument each input binds to (`$name=operand`); empty or all-set
    inputnames: list[str] = field(default_factory=list)
    # a module operator's (moduleop=) own body, captured in memory only (never in pnnx.param):
    # its weights are this operator's attrs, see body_weight_key()
    subgraph: "Graph | None" = None

    def input(self, name: str, position: int | None = None) -> "Operand | None":
        """The input bound to keyword `name` (`$name=`); when the operator records no input
        names (a graph read from an older pnnx.param), the one at `position`. None if absent.
        A keyword given to several inputs (`$tensors=` of torch.cat) returns the first."""
        if self.inputnames:
            return self.inputs[self.inputnames.index(name)] if name in self.inputnames else None
        return self.inputs[position] if position is not None and 0 <= position < len(self.inputs) else None

    def __repr__(self) -> str:
        ins = ",".join(o.name for o in self.inputs)
        outs = ",".join(o.name for o in self.outputs)
        return f"Operator({self.type} {self.name} [{ins}] -> [{outs}])"


def body_weight_key(op: Operator, key: str) -> str:
    """The attribute path, relative to the enclosing module operator, of weight `key` of `op`
    inside a moduleop body: `conv.0` + `weight` -> `conv.0.weight`; a bare parameter
    (`pnnx.Attribute gain @data`) is the path itself, `gain`."""
    return op.name if op.type == "pnnx.Attribute" else f"{op.name}.{key}"


class Graph:
    """Operators in topological order plus the operands between them."""

    def __init__(self) -> None:
        self.ops: list[Operator] = []
        self.operands: list[Operand] = []

    # --- construction -------------------------------------------------------------
    def new_operator(self, type: str, name: str, *, before: Operator | None = None,
                     after: Operator | None = None) -> Operator:
        op = Operator(type, name)
        if before is not None:
            self.ops.insert(self.ops.index(before), op)
        elif after is not None:
            self.ops.insert(self.ops.index(after) + 1, op)
        else:
            self.ops.append(op)
        return op

    def new_operand(self, name: str, shape: Iterable[int] | None = None, dtype: str | None = None) -> Operand:
        operand = Operand(name, list(shape) if shape is not None else None, dtype)
        self.operands.append(operand)
        return operand

    def get_operand(self, name: str) -> Operand | None:
        for operand in self.operands:
            if operand.name == name:
                return operand
        return None

    def connect(self, op: Operator, inputs: Iterable[Operand] = (), outputs: Iterable[Operand] = ()) -> None:
        """Append inputs/outputs to `op`, keeping producer/consumer links consistent."""
        for operand in inputs:
            op.inputs.append(operand)
            operand.consumers.append(op)
        for operand in outputs:
            op.outputs.append(operand)
            operand.producer = op

    # --- editing --------------------------------------------------------------------
    def replace_uses(self, old: Operand, new: Operand) -> None:
        """Make every consumer of `old` read `new` instead."""
        for consumer in list(old.consumers):
            consumer.inputs = [new if i is old else i for i in consumer.inputs]
            new.consumers.append(consumer)
        old.consumers.clear()

    def remove_operator(self, op: Operator) -> None:
        """Delete `op`; its outputs must be unused. Unused outputs are deleted too."""
        for out in op.outputs:
            if out.consumers:
                raise ValueError(f"cannot remove {op.name}: output {out.name} is still used")
        for operand in op.inputs:
            if op in operand.consumers:
                operand.consumers.remove(op)
        for out in op.outputs:
            self.operands.remove(out)
        self.ops.remove(op)

    def inputs(self) -> list[Operator]:
        return [op for op in self.ops if op.type == "pnnx.Input"]

    def outputs(self) -> list[Operator]:
        return [op for op in self.ops if op.type == "pnnx.Output"]

    def copy(self) -> "Graph":
        """A structural copy: new operators and operands (params deep-copied), the same
        read-only weight Attributes and moduleop bodies. `copy.deepcopy` would recurse along
        the producer/consumer chain and overflow on real networks."""
        new = Graph()
        operands: dict[int, Operand] = {}

        def mapped(old: Operand) -> Operand:
            if id(old) not in operands:  # an operand the graph does not list
                operands[id(old)] = new.new_operand(old.name, old.shape, old.dtype)
            return operands[id(old)]

        for old in self.operands:
            operand = new.new_operand(old.name, old.shape, old.dtype)
            operand.params = copy.deepcopy(old.params)
            operands[id(old)] = operand
        for old_op in self.ops:
            op = Operator(old_op.type, old_op.name, params=copy.deepcopy(old_op.params),
                          attrs=dict(old_op.attrs), inputnames=list(old_op.inputnames), subgraph=old_op.subgraph)
            new.ops.append(op)
            new.connect(op, [mapped(o) for o in old_op.inputs], [mapped(o) for o in old_op.outputs])
        return new

    def __repr__(self) -> str:
        return f"Graph({len(self.ops)} ops, {len(self.operands)} operands)"
