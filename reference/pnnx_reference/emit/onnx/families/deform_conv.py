"""torchvision's deformable convolution (torchvision.ops.deform_conv2d / DeformConv2d) ->
DeformConv (opset 19): X, W, offset, optional B and mask; the weight groups from the weight's
shape, the offset groups from the offset's."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import ints
from ..registry import LOWERINGS


@LOWERINGS.register("torchvision.ops.deform_conv2d", "torchvision.ops.DeformConv2d")
def deform_conv2d(ctx, op):
    if ctx.opset < 19:
        raise Unsupported("DeformConv needs opset 19")
    module = op.type == "torchvision.ops.DeformConv2d"  # forward(input, offset, mask=None)
    x, offset, mask = op.input("input", 0), op.input("offset", 1), op.input("mask", 2 if module else None)
    if module:
        weight, wshape = ctx.attr_weight(op, "weight"), list(op.attrs["weight"].shape)
        bias = ctx.attr_weight(op, "bias") if "bias" in op.attrs else ""
    else:
        w, bias_in = op.input("weight"), op.input("bias")
        weight, wshape, bias = w.name, ctx.shape(w), bias_in.name if bias_in is not None else ""
    if any(ctx.rank(t) != 4 for t in (x, offset)) or min(ctx.shape(x)[1], ctx.shape(offset)[1]) < 1:
        raise Unsupported("expects (N, C, H, W) input and offset with known channels")
    kernel = wshape[2:]
    groups, offset_groups = ctx.shape(x)[1] // wshape[1], ctx.shape(offset)[1] // (2 * kernel[0] * kernel[1])
    pads = ints(op.params.get("padding", 0), 2, "padding")
    inputs = [x.name, weight, offset.name, bias] + ([mask.name] if mask is not None else [])
    ctx.node("DeformConv", inputs if inputs[-1] else inputs[:3], ctx.y(op), kernel_shape=kernel,
           strides=ints(op.params.get("stride", 1), 2, "stride"), pads=pads + pads,
           dilations=ints(op.params.get("dilation", 1), 2, "dilation"), group=groups, offset_group=offset_groups)
