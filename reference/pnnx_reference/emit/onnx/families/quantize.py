"""Per-tensor quantization. A quantized tensor is carried as its storage integers (u8, i8, i32,
as its `#` annotation says), so int_repr is an Identity. quint8/qint8 use QuantizeLinear and
DequantizeLinear; ONNX has no int32 form of those, so qint32 is spelled out: round(x/scale)+zp,
saturated, and (q-zp)*scale back in float32 as torch computes it."""
from __future__ import annotations

from ....errors import Unsupported
from ....expression import QUANTIZED_DTYPE_NAMES
from ..dtypes import onnx_type
from ..registry import LOWERINGS

INT32_RANGE = (-2**31, 2**31 - 1)


def _scale_zero_point(op) -> tuple[float, int, str]:
    """(scale, zero_point, storage dtype) of a torch.quantize_per_tensor operator."""
    if op is None or op.type != "torch.quantize_per_tensor":
        raise Unsupported("the quantized input does not come from torch.quantize_per_tensor")
    scale, zero_point, dtype = (op.params.get(k) for k in ("scale", "zero_point", "dtype"))
    if not isinstance(scale, (int, float)) or isinstance(zero_point, bool) or not isinstance(zero_point, int):
        raise Unsupported("scale and zero_point must be constants")
    if dtype not in QUANTIZED_DTYPE_NAMES:
        raise Unsupported(f"dtype {dtype!r} is not a quantized dtype")
    return float(scale), zero_point, op.outputs[0].dtype


@LOWERINGS.register("torch.quantize_per_tensor")
def quantize_per_tensor(ctx, op):
    if len(op.inputs) != 1 or ctx.dtype(op.inputs[0]) != "f32":
        raise Unsupported("only a float32 tensor with constant scale and zero_point is lowered")
    scale, zero_point, storage = _scale_zero_point(op)
    if storage in ("u8", "i8"):
        ctx.node("QuantizeLinear", [ctx.x(op), ctx.const(scale, "f32"), ctx.const(zero_point, storage)], ctx.y(op))
        return
    rounded = ctx.node("Round", [ctx.node("Div", [ctx.x(op), ctx.const(scale, "f32")])])
    shifted = ctx.node("Add", [ctx.node("Cast", [rounded], to=onnx_type("f64")), ctx.const(float(zero_point), "f64")])
    low, high = INT32_RANGE
    clipped = ctx.node("Clip", [shifted, ctx.const(float(low), "f64"), ctx.const(float(high), "f64")])
    ctx.node("Cast", [clipped], ctx.y(op), to=onnx_type("i32"))


@LOWERINGS.register("Tensor.int_repr")
def int_repr(ctx, op):
    ctx.node("Identity", [ctx.x(op)], ctx.y(op))


@LOWERINGS.register("torch.dequantize", "Tensor.dequantize")
def dequantize(ctx, op):
    scale, zero_point, storage = _scale_zero_point(op.inputs[0].producer)
    if storage in ("u8", "i8"):
        ctx.node("DequantizeLinear", [ctx.x(op), ctx.const(scale, "f32"), ctx.const(zero_point, storage)], ctx.y(op))
        return
    centred = ctx.node("Sub", [ctx.node("Cast", [ctx.x(op)], to=onnx_type("f32")), ctx.const(float(zero_point), "f32")])
    ctx.node("Mul", [centred, ctx.const(scale, "f32")], ctx.y(op))
