"""Truth values on float blobs. ncnn blobs hold floats, so a bool tensor is carried as a float
0/1 blob (a bool graph input is fed so); logic, casts and any/all build on these, and sums of
bools are counts."""
from __future__ import annotations

from ...errors import Unsupported
from .arithmetic import BINARY
from .context import Context


# the torch dtypes ncnn carries as float blobs holding integer values (a bool as 0/1)
INTEGRAL = ("bool", "u8", "i8", "i16", "i32", "i64")


def is_bool(operand) -> bool:
    return operand.dtype == "bool"


def above_zero(ctx: Context, src: str, out: str) -> str:
    """1 where src > 0, else 0."""
    ctx.emit("Threshold", "mask", [src], [out], {0: 0.0})
    return out


def complement(ctx: Context, src: str, out: str) -> str:
    """1 - src."""
    ctx.emit("BinaryOp", "not", [src], [out], {0: BINARY["sub"][1], 1: 1, 2: 1.0})
    return out


MAX_EXACT_COUNT = 2 ** 24  # float32 holds every integer up to this (fp16 storage: up to 2048)


def check_count(terms: int) -> None:
    """A sum of `terms` bools is a count of up to `terms`: exact in float32 blobs while it
    stays at most 2^24 (with fp16 storage, ncnn's default where the CPU has it, at most 2048)."""
    if terms > MAX_EXACT_COUNT:
        raise Unsupported(f"a count of up to {terms} bools: float32 blobs hold integers exactly "
                          f"only up to 2^24 = {MAX_EXACT_COUNT}")
