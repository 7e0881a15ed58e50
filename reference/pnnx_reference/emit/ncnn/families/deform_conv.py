"""torchvision's deformable convolution -> DeformableConv2D (inputs: input, offset, optional
mask; 0=out channels, 1/11 kernel w/h, 2/12 dilation, 3/13 stride, 4/14 padding, 5=bias,
6=weight size; the weight (out, in, kh, kw), no groups).

ncnn's layer has one offset group and no weight groups. Weight groups are one dense weight,
zero outside each group's block. Offset groups (the offset holding 2 * groups * kh * kw
channels, each group moving its own share of the input channels) are one layer per group on
its slices of input, offset and mask, summed: the zero blocks add exact zeros."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..arithmetic import binary
from ..context import Context, as_list, param
from ..layers import Weight
from ..registry import FIRST, LOWERINGS


def _weights(ctx: Context, op) -> tuple[np.ndarray, np.ndarray | None]:
    if "weight" in op.attrs:  # the module form's own
        bias = op.attrs.get("bias")
        return (op.attrs["weight"].to_numpy().astype(np.float32),
                None if bias is None else bias.to_numpy().astype(np.float32))
    try:
        return ctx.constant_input(op, "weight", 2), ctx.constant_input(op, "bias", 3)
    except Unsupported:
        raise Unsupported("the weight and bias must be constants: ncnn DeformableConv2D takes no weight blob") from None


def _dense(weight: np.ndarray, channels: int) -> np.ndarray:
    """A grouped weight (out, in / groups, kh, kw) as the ungrouped (out, in, kh, kw) it computes."""
    groups = channels // weight.shape[1]
    if groups * weight.shape[1] != channels or weight.shape[0] % groups:
        raise Unsupported(f"weight {tuple(weight.shape)} does not divide {channels} input channels into groups")
    out_g, in_g = weight.shape[0] // groups, weight.shape[1]
    dense = np.zeros((weight.shape[0], channels) + weight.shape[2:], np.float32)
    for g in range(groups):
        dense[g * out_g:(g + 1) * out_g, g * in_g:(g + 1) * in_g] = weight[g * out_g:(g + 1) * out_g]
    return dense


def _geometry(op) -> dict[int, int]:
    p = {}
    for key, ids in (("dilation", (2, 12)), ("stride", (3, 13)), ("padding", (4, 14))):
        h, w = (int(v) for v in as_list(param(op, key, 1 if key != "padding" else 0), 2))
        p[ids[0]], p[ids[1]] = w, h
    return p


def _pieces(ctx: Context, op, operand, parts: int) -> list[str]:
    """The operand's channels in `parts` equal slices (itself when one)."""
    blob = ctx.blob(operand)
    if parts == 1:
        return [blob]
    out = [ctx.temp(operand.name) for _ in range(parts)]
    ctx.emit("Slice", "slice", [blob], out, {0: [ctx.shape(operand)[0] // parts] * parts, 1: 0})
    return out


@LOWERINGS.register("torchvision.ops.deform_conv2d", "torchvision.ops.DeformConv2d", batch=FIRST,
                    unbatched_rank=None, batched_inputs=5)
def deform_conv2d(ctx: Context, op) -> None:
    module = op.type == "torchvision.ops.DeformConv2d"  # forward(input, offset, mask=None)
    x, offset, mask = op.input("input", 0), op.input("offset", 1), op.input("mask", 2 if module else None)
    if any(ctx.rank(t) != 3 for t in (x, offset) + ((mask,) if mask is not None else ())):
        raise Unsupported("expects (N, C, H, W) input, offset and mask")
    weight, bias = _weights(ctx, op)
    channels, kh, kw = ctx.shape(x)[0], weight.shape[2], weight.shape[3]
    groups = ctx.shape(offset)[0] // (2 * kh * kw)
    if groups < 1 or groups * 2 * kh * kw != ctx.shape(offset)[0] or channels % groups \
            or mask is not None and ctx.shape(mask)[0] != groups * kh * kw:
        raise Unsupported(f"offset {tuple(ctx.torch_shape(offset))} does not hold 2 * kh * kw channels per "
                          "offset group")
    dense = _dense(weight, channels)
    base = {0: int(weight.shape[0]), 1: int(kw), 11: int(kh), **_geometry(op)}
    inputs = [_pieces(ctx, op, t, groups) for t in (x, offset) + ((mask,) if mask is not None else ())]
    share = channels // groups
    out = op.outputs[0].name
    partial = None
    for j, blobs in enumerate(zip(*inputs)):
        w = np.ascontiguousarray(dense[:, j * share:(j + 1) * share])
        with_bias = bias is not None and j == 0
        p = {**base, 5: int(with_bias), 6: int(w.size)}
        weights = [Weight(w.reshape(-1), tagged=True)] + ([Weight(bias.reshape(-1), tagged=False)] if with_bias else [])
        target = out if groups == 1 else ctx.temp(out)
        ctx.emit("DeformableConv2D", "deformconv2d", list(blobs), [target], p, weights)
        partial = target if partial is None else binary(ctx, "add", partial, target, out if j == groups - 1
                                                        else ctx.temp(out))
