"""The values an ONNX graph carries while it is replayed.

A tensor is a `torch.Tensor` (the tracer records what computes it). An integer tensor computed
from tensor shapes (`Shape -> Gather -> Unsqueeze -> Concat -> Reshape`, as torch.onnx writes
`x.view(x.size(0), -1)`) is a `ShapeValue`: a numpy object array of Python ints, which under
the tracer are `SymInt`s that remember the `size(@0,d)` they came from. So the Reshape that
reads it records `Tensor.reshape` with a shape expression, dynamic where the input is, and a
plain constant where every size is known."""
from __future__ import annotations

import numpy as np
import onnx
import torch

from ..python.shapes import SymInt, has_symint

# ONNX TensorProto element type -> torch dtype (those PyTorch can hold)
TORCH_DTYPES = {
    onnx.TensorProto.FLOAT: torch.float32, onnx.TensorProto.DOUBLE: torch.float64,
    onnx.TensorProto.FLOAT16: torch.float16, onnx.TensorProto.BFLOAT16: torch.bfloat16,
    onnx.TensorProto.INT8: torch.int8, onnx.TensorProto.INT16: torch.int16,
    onnx.TensorProto.INT32: torch.int32, onnx.TensorProto.INT64: torch.int64,
    onnx.TensorProto.UINT8: torch.uint8, onnx.TensorProto.BOOL: torch.bool,
    onnx.TensorProto.COMPLEX64: torch.complex64, onnx.TensorProto.COMPLEX128: torch.complex128,
}


def torch_dtype(elem_type: int, what: str = "") -> torch.dtype:
    if elem_type not in TORCH_DTYPES:
        name = onnx.TensorProto.DataType.Name(elem_type) if elem_type in onnx.TensorProto.DataType.values() else elem_type
        from ...errors import Unsupported

        raise Unsupported(f"{what + ': ' if what else ''}element type {name} has no PyTorch dtype")
    return TORCH_DTYPES[elem_type]


class ShapeValue:
    """An int64 (or float, after a Cast) tensor known at conversion time as sizes."""

    __slots__ = ("array", "dtype")

    def __init__(self, values, dtype: torch.dtype = torch.int64):
        self.array = np.array(values, dtype=object) if not isinstance(values, np.ndarray) else values.astype(object)
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def dim(self) -> int:
        return self.array.ndim

    def tolist(self):
        return self.array.tolist()

    def __repr__(self) -> str:
        return f"ShapeValue({self.tolist()!r}, {self.dtype})"


def is_shape(value) -> bool:
    return isinstance(value, ShapeValue)


def from_tensor(tensor: torch.Tensor) -> ShapeValue:
    """A small constant integer tensor taking part in shape arithmetic."""
    return ShapeValue(np.array(tensor.detach().cpu().tolist(), dtype=object).reshape(tuple(tensor.shape)),
                      tensor.dtype)


_NUMPY = {torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.float16, torch.int8: np.int8,
          torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64, torch.uint8: np.uint8,
          torch.bool: np.bool_, torch.complex64: np.complex64, torch.complex128: np.complex128}


def constant(values, dtype: torch.dtype) -> torch.Tensor:
    """A tensor the rules compute at conversion time (indices, weights, masks): made outside the
    tracer's view (`torch.from_numpy` is not a recorded call), so it becomes a pnnx.Attribute."""
    if dtype not in _NUMPY:
        raise ValueError(f"no numpy dtype for {dtype}")
    return torch.from_numpy(np.array(values, dtype=_NUMPY[dtype]))


def to_tensor(value) -> torch.Tensor:
    """A ShapeValue used as data. Plain sizes become a constant; sizes that came from a traced
    shape go through `torch.tensor`, which the tracer records with their expressions."""
    if isinstance(value, torch.Tensor):
        return value
    items = value.tolist()
    if not has_symint(_flat(items)):
        return constant(_plain(items), value.dtype) if value.dtype in _NUMPY else torch.tensor(_plain(items), dtype=value.dtype)
    return torch.tensor(items, dtype=value.dtype)


def _flat(items) -> list:
    if isinstance(items, list):
        return [v for item in items for v in _flat(item)]
    return [items]


def _plain(items):
    if isinstance(items, list):
        return [_plain(v) for v in items]
    if isinstance(items, SymInt):
        return int(items)
    if isinstance(items, bool):
        return items
    return items


def elementwise(fn, *values) -> ShapeValue:
    """`fn` over ShapeValues and small constant tensors, numpy-style broadcasting."""
    arrays, dtype = [], None
    for v in values:
        v = v if isinstance(v, ShapeValue) else from_tensor(v)
        arrays.append(v.array)
        dtype = dtype or v.dtype
    out = np.vectorize(fn, otypes=[object])(*arrays) if arrays[0].size or arrays[-1].size else arrays[0]
    return ShapeValue(np.asarray(out, dtype=object), dtype)


def as_ints(value) -> list:
    """A ShapeValue's or constant tensor's items as ints (SymInts kept)."""
    items = value.tolist()
    return items if isinstance(items, list) else [items]
