"""pnnx dtype suffixes <-> torch dtypes, for building case inputs."""
from __future__ import annotations


def torch_dtype(suffix: str):
    import torch

    table = {
        "f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
        "i32": torch.int32, "i64": torch.int64, "i16": torch.int16, "i8": torch.int8,
        "u8": torch.uint8, "bool": torch.bool, "c64": torch.complex64, "c128": torch.complex128,
    }
    if suffix not in table:
        raise ValueError(f"unknown dtype suffix {suffix!r}")
    return table[suffix]
