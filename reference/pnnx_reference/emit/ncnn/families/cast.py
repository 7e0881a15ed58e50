"""dtype casts (Tensor.to, .float, .int, .bool, type_as, ...) on float blobs: bool (a 0/1 blob)
and float-to-float are the blob itself, to bool is x != 0, float to int32/int64 truncates
toward zero like torch."""
from __future__ import annotations

from ....errors import Unsupported
from ..arithmetic import unary
from ..context import Context
from ..registry import LOWERINGS
from ..truth import above_zero, is_bool

FLOATS, WIDE_INTS = ("f32", "f64"), ("i32", "i64")


def _cast(ctx: Context, op) -> None:
    """A cast by the operand and result dtypes: bool (0/1) and float-to-float are the blob
    itself, to bool is x != 0, float to int32/int64 truncates toward zero like torch."""
    src, dst = op.inputs[0], op.outputs[0]
    if src.dtype == dst.dtype or is_bool(src) or (src.dtype in FLOATS and dst.dtype in FLOATS):
        ctx.alias(dst, src)
    elif dst.dtype == "bool":
        above_zero(ctx, unary(ctx, "abs", ctx.blob(src), ctx.temp(dst.name)), dst.name)
    elif src.dtype in FLOATS and dst.dtype in WIDE_INTS:
        unary(ctx, "trunc", ctx.blob(src), dst.name)
    else:
        raise Unsupported(f"cast from {src.dtype} to {dst.dtype} has no exact ncnn form")


LOWERINGS.register("Tensor.float", "Tensor.double", "Tensor.half", "Tensor.bool", "Tensor.long", "Tensor.int",
                   "Tensor.to", "Tensor.type_as", bool_operands=True, batchless=True)(_cast)
