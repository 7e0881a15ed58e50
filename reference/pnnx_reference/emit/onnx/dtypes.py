"""pnnx dtype suffixes <-> ONNX TensorProto element types."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...errors import Unsupported

ONNX_TYPES = {
    "f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE, "f16": TensorProto.FLOAT16,
    "bf16": TensorProto.BFLOAT16, "i32": TensorProto.INT32, "i64": TensorProto.INT64,
    "i16": TensorProto.INT16, "i8": TensorProto.INT8, "u8": TensorProto.UINT8,
    "bool": TensorProto.BOOL, "c64": TensorProto.COMPLEX64, "c128": TensorProto.COMPLEX128,
}
NUMPY_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32,
               "i64": np.int64, "i16": np.int16, "i8": np.int8, "u8": np.uint8, "bool": np.bool_}
FLOATS = ("f32", "f64", "f16", "bf16")
COMPLEX = ("c32", "c64", "c128")
# a complex tensor is carried as its parts' real dtype with a trailing axis of 2
COMPLEX_PARTS = {"c64": "f32", "c128": "f64"}

# `dtype=torch.float` style params and `torch.float(@0)` expression casts
TORCH_NAMES = {
    "torch.float": "f32", "torch.float32": "f32", "torch.double": "f64", "torch.float64": "f64",
    "torch.half": "f16", "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.int": "i32",
    "torch.int32": "i32", "torch.long": "i64", "torch.int64": "i64", "torch.short": "i16",
    "torch.int16": "i16", "torch.int8": "i8", "torch.uint8": "u8", "torch.bool": "bool",
}


def onnx_type(suffix: str | None) -> int:
    if suffix is None:
        raise Unsupported("operand dtype is unknown")
    if suffix in ("c64", "c128", "c32"):
        raise Unsupported(f"complex tensors ({suffix}): onnxruntime has no complex kernels")
    if suffix not in ONNX_TYPES:
        raise Unsupported(f"dtype {suffix} has no ONNX tensor type")
    return ONNX_TYPES[suffix]


def numpy_type(suffix: str):
    if suffix not in NUMPY_TYPES:
        raise Unsupported(f"dtype {suffix} cannot be a constant here")
    return NUMPY_TYPES[suffix]


def from_torch_name(name: str) -> str:
    if name not in TORCH_NAMES:
        raise Unsupported(f"dtype {name} has no ONNX tensor type")
    return TORCH_NAMES[name]
