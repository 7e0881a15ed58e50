"""Quantized graphs (QDQ and the QLinear / Integer ops) as the arithmetic they stand for:
DequantizeLinear is `(x - zero_point) * scale`, QuantizeLinear rounds half to even and saturates
to the zero point's type; the integer matmul and convolution accumulate exactly (int32, or
float64 for convolutions) before requantizing."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .operands import axis, conv_pads, torch_pad
from .registry import RULES

rule = RULES.register

_RANGES = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.int16: (-32768, 32767), torch.int32: None}


def _broadcast(ctx, param, x, attr_axis: str = "axis"):
    """A per-tensor, per-axis or blocked scale / zero point, shaped to broadcast against x."""
    if param.dim() == 0 or param.numel() == 1:
        return param.reshape(())
    a = axis(int(ctx.attr(attr_axis, 1)), x.dim())
    block = int(ctx.attr("block_size", 0) or 0)
    if block:
        param = torch.repeat_interleave(param, block, dim=a)
        return param.narrow(a, 0, int(x.shape[a])) if int(param.shape[a]) != int(x.shape[a]) else param
    shape = [1] * x.dim()
    shape[a] = -1
    return param.reshape(shape)


def quantize(x, scale, zero_point, dtype: torch.dtype):
    bounds = _RANGES.get(dtype)
    y = torch.round(x / scale) + zero_point
    if bounds is not None:
        y = torch.clamp(y, bounds[0], bounds[1])
    return y.to(dtype)


def dequantize(x, scale, zero_point):
    values = x.to(scale.dtype if isinstance(scale, torch.Tensor) else torch.float32)
    if zero_point is not None:
        values = values - zero_point.to(values.dtype) if isinstance(zero_point, torch.Tensor) else values - zero_point
    return values * scale


@rule("QuantizeLinear", produces=(
      "Tensor.narrow", "Tensor.reshape", "torch.clamp", "torch.repeat_interleave", "torch.round"))
def quantize_linear(ctx):
    x = ctx.tensor(0)
    scale = _broadcast(ctx, ctx.tensor(1), x)
    zero = ctx.tensor(2) if ctx.has(2) else None
    dtype = zero.dtype if zero is not None else torch.uint8
    if ctx.attr("output_dtype"):
        from ..values import torch_dtype

        dtype = torch_dtype(int(ctx.attr("output_dtype")), "QuantizeLinear")
    if dtype not in _RANGES:
        ctx.fail(f"quantizing to {dtype} has no PyTorch dtype")
    offset = _broadcast(ctx, zero, x).to(x.dtype) if zero is not None else 0.0
    return quantize(x, scale, offset, dtype)


@rule("DequantizeLinear", produces=("Tensor.narrow", "Tensor.reshape", "torch.repeat_interleave"))
def dequantize_linear(ctx):
    x = ctx.tensor(0)
    scale = _broadcast(ctx, ctx.tensor(1), x)
    zero = _broadcast(ctx, ctx.tensor(2), x) if ctx.has(2) else None
    y = dequantize(x, scale, zero)
    if ctx.attr("output_dtype"):
        from ..values import torch_dtype

        y = y.to(torch_dtype(int(ctx.attr("output_dtype")), "DequantizeLinear"))
    return y


@rule("DynamicQuantizeLinear", produces=("torch.amax", "torch.amin", "torch.clamp", "torch.round"))
def dynamic_quantize_linear(ctx):
    """uint8 with the range of x widened to include 0: scale = (max - min) / 255."""
    x = ctx.tensor(0)
    low = torch.clamp(torch.amin(x), max=0.0)
    high = torch.clamp(torch.amax(x), min=0.0)
    scale = (high - low) / 255.0
    zero = torch.clamp(torch.round(0.0 - low / scale), 0, 255)
    return [quantize(x, scale, zero, torch.uint8), scale, zero.to(torch.uint8)]


def _centered(ctx, i: int, zero_index: int, x=None):
    value = ctx.tensor(i).to(torch.int32)
    if ctx.has(zero_index):
        zero = ctx.tensor(zero_index).to(torch.int32)
        if x is not None and zero.numel() > 1:
            zero = zero.reshape([-1] + [1] * (x.dim() - 1))
        value = value - zero
    return value


@rule("MatMulInteger", produces=("Tensor.reshape", "torch.matmul"))
def matmul_integer(ctx):
    a = _centered(ctx, 0, 2)
    b = ctx.tensor(1).to(torch.int32)
    if ctx.has(3):
        b = b - ctx.tensor(3).to(torch.int32)
    return torch.matmul(a, b)


@rule("ConvInteger", produces=("F.conv1d", "F.conv2d", "F.conv3d", "F.pad", "Tensor.reshape"))
def conv_integer(ctx):
    
    x = _centered(ctx, 0, 2).to(torch.float64)
    w = ctx.tensor(1).to(torch.int32)
    if ctx.has(3):
        zero = ctx.tensor(3).to(torch.int32)
        w = w - (zero.reshape([-1] + [1] * (w.dim() - 1)) if zero.numel() > 1 else zero)
    n = x.dim() - 2
    kernel = list(w.shape[2:])
    strides = [int(v) for v in ctx.attr("strides") or [1] * n]
    dilations = [int(v) for v in ctx.attr("dilations") or [1] * n]
    pads = conv_pads(ctx, x, n, kernel, strides, dilations)
    x = F.pad(x, torch_pad(pads))
    convs = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    y = convs[n](x, w.to(torch.float64), stride=strides, dilation=dilations, groups=int(ctx.attr("group", 1)))
    return y.to(torch.int32)


@rule("QLinearMatMul", produces=("Tensor.reshape", "torch.clamp", "torch.matmul", "torch.round"))
def qlinear_matmul(ctx):
    a = dequantize(ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    b_scale, b_zero = ctx.tensor(4), ctx.tensor(5)
    if b_scale.numel() > 1:  # per output column
        b_scale, b_zero = b_scale.reshape(1, -1), b_zero.reshape(1, -1)
    b = dequantize(ctx.tensor(3), b_scale, b_zero)
    y_zero = ctx.tensor(7)
    return quantize(torch.matmul(a, b), ctx.tensor(6), y_zero.to(torch.float32), y_zero.dtype)


@rule("QLinearConv", produces=(
      "F.conv1d", "F.conv2d", "F.conv3d", "F.pad", "Tensor.reshape", "torch.clamp", "torch.round"))
def qlinear_conv(ctx):
    
    x = dequantize(ctx.tensor(0), ctx.tensor(1), ctx.tensor(2))
    w_scale, w_zero = ctx.tensor(4), ctx.tensor(5)
    w = ctx.tensor(3)
    if w_scale.numel() > 1:
        shape = [-1] + [1] * (w.dim() - 1)
        w_scale, w_zero = w_scale.reshape(shape), w_zero.reshape(shape)
    w = dequantize(w, w_scale, w_zero)
    n = x.dim() - 2
    strides = [int(v) for v in ctx.attr("strides") or [1] * n]
    dilations = [int(v) for v in ctx.attr("dilations") or [1] * n]
    pads = conv_pads(ctx, x, n, list(w.shape[2:]), strides, dilations)
    convs = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    bias = ctx.tensor(8).to(torch.float32) * (ctx.tensor(1) * w_scale.reshape(-1)) if ctx.has(8) else None
    y = convs[n](F.pad(x, torch_pad(pads)), w, bias, stride=strides, dilation=dilations,
                 groups=int(ctx.attr("group", 1)))
    y_zero = ctx.tensor(7)
    return quantize(y, ctx.tensor(6), y_zero.to(torch.float32), y_zero.dtype)
