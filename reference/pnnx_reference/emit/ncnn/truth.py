"""Truth values on float blobs. ncnn blobs hold floats, so a bool tensor is carried as a float
0/1 blob (a bool graph input is fed so); logic, casts and any/all build on these."""
from __future__ import annotations

from .arithmetic import BINARY
from .context import Context


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
