"""dtype casts (Tensor.to, .float, .int, .bool, type_as, ...) on float blobs, which carry a
bool as 0/1 and an integer as its float value (exact below 2^24): bool, float-to-float
widening and integer-to-float or to int32/int64 are the blob itself; to bool is x != 0; float
to int32/int64 truncates toward zero like torch, clamped to the integer's range (finite in
float32; fp16 storage still holds +-2^63 as inf, so selections take integers as possibly
infinite: log(0) = -inf cast to an index, as T5's relative position buckets do); float32 to float16 rounds to
the nearest half (a Cast to fp16 and back, run on the CPU: ncnn's Vulkan Cast does not round)."""
from __future__ import annotations

from ....errors import Unsupported
from ..arithmetic import unary
from ..context import Context
from ..registry import ANY, LOWERINGS
from ..truth import above_zero, is_bool

FLOATS, WIDE_INTS = ("f32", "f64"), ("i32", "i64")
INTEGERS = ("i8", "i16", "i32", "i64", "u8")
# ncnn Cast type codes, and the layer featmask (param 31) bit that keeps a layer off Vulkan
CAST_FP32, CAST_FP16, NO_VULKAN = 1, 2, 16
# the float32 values nearest the ends of each integer's range, inside it: torch leaves a float
# out of the range undefined (x86 gives the lowest integer, ARM saturates); here it saturates
INT_RANGE = {"i32": (-2.0 ** 31, 2.0 ** 31 - 2.0 ** 7), "i64": (-2.0 ** 63, 2.0 ** 63 - 2.0 ** 39)}


def _cast(ctx: Context, op) -> None:
    src, dst = op.inputs[0], op.outputs[0]
    if src.dtype == dst.dtype or is_bool(src) or _same_values(src.dtype, dst.dtype):
        ctx.alias(dst, src)
    elif dst.dtype == "bool":
        above_zero(ctx, unary(ctx, "abs", ctx.blob(src), ctx.temp(dst.name)), dst.name)
    elif src.dtype in FLOATS and dst.dtype in WIDE_INTS:
        low, high = INT_RANGE[dst.dtype]
        ctx.emit("Clip", "to_int", [unary(ctx, "trunc", ctx.blob(src), ctx.temp(dst.name))], [dst.name],
                 {0: low, 1: high})
    elif src.dtype == "f32" and dst.dtype == "f16":
        _round_to_half(ctx, ctx.blob(src), dst.name)
    else:
        raise Unsupported(f"cast from {src.dtype} to {dst.dtype} has no exact ncnn form")


def _same_values(src: str | None, dst: str | None) -> bool:
    """The cast keeps every value the blob can hold: float widening (f16 values are f32
    values), integers to float or to a wide integer."""
    return ((src in FLOATS + ("f16",) and dst in FLOATS)
            or (src in INTEGERS and dst in FLOATS + WIDE_INTS))


def _round_to_half(ctx: Context, src: str, out: str) -> None:
    """fp32 -> fp16 -> fp32 through ncnn's Cast, which rounds to nearest even (overflow to
    inf) as torch does. Kept on the CPU: on Vulkan, Cast leaves fp32 storage unrounded."""
    half = ctx.temp(out)
    ctx.emit("Cast", "to_half", [src], [half], {0: CAST_FP32, 1: CAST_FP16, 31: NO_VULKAN})
    ctx.emit("Cast", "from_half", [half], [out], {0: CAST_FP16, 1: CAST_FP32, 31: NO_VULKAN})


LOWERINGS.register("Tensor.float", "Tensor.double", "Tensor.half", "Tensor.bool", "Tensor.long", "Tensor.int",
                   "Tensor.to", "Tensor.type_as", bool_operands=True, int_operands=True, batch=ANY)(_cast)
