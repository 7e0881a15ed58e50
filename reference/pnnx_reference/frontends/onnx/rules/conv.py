"""Conv and ConvTranspose: `nn.ConvNd` / `nn.ConvTransposeNd` holding constant weights,
`F.convNd` when the weight is computed at run time. Asymmetric padding (auto_pad SAME_*,
uneven `pads`) becomes an `F.pad` before a convolution, a crop after a transposed one."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .... import optional
from .operands import conv_pads, ints_attr, spatial_rank, torch_pad
from .registry import RULES

rule = RULES.register

_CONV = {1: (nn.Conv1d, F.conv1d), 2: (nn.Conv2d, F.conv2d), 3: (nn.Conv3d, F.conv3d)}
_DECONV = {1: (nn.ConvTranspose1d, F.conv_transpose1d), 2: (nn.ConvTranspose2d, F.conv_transpose2d),
           3: (nn.ConvTranspose3d, F.conv_transpose3d)}


def _weight(tensor: torch.Tensor) -> nn.Parameter:
    return nn.Parameter(tensor.detach().clone(), requires_grad=False)


def _window(ctx):
    """(x, w, spatial rank, kernel, strides, dilations, group) of a (transposed) convolution."""
    x, w = ctx.tensor(0), ctx.tensor(1)
    n = spatial_rank(ctx, x)
    kernel = ints_attr(ctx, "kernel_shape", n, 0) if ctx.attr("kernel_shape") else list(w.shape[2:])
    strides, dilations = ints_attr(ctx, "strides", n, 1), ints_attr(ctx, "dilations", n, 1)
    return x, w, n, kernel, strides, dilations, int(ctx.attr("group", 1))


@rule("Conv", produces=("F.conv1d", "F.conv2d", "F.conv3d", "F.pad", "nn.Conv1d", "nn.Conv2d", "nn.Conv3d"))
def conv(ctx):
    x, w, n, kernel, strides, dilations, group = _window(ctx)
    pads = conv_pads(ctx, x, n, kernel, strides, dilations)
    if pads[:n] != pads[n:]:
        x = F.pad(x, torch_pad(pads))
        pads = [0] * (2 * n)
    padding = tuple(pads[:n])
    weight, bias = ctx.const(1), ctx.const(2)
    if weight is not None and (bias is not None or not ctx.has(2)) and weight.is_floating_point():
        module_cls = _CONV[n][0]

        def make():
            m = module_cls(weight.shape[1] * group, weight.shape[0], tuple(weight.shape[2:]), stride=tuple(strides),
                           padding=padding, dilation=tuple(dilations), groups=group, bias=bias is not None,
                           dtype=weight.dtype)
            m.weight = _weight(weight)
            if bias is not None:
                m.bias = _weight(bias)
            return m
        return ctx.module(make)(x)
    b = ctx.tensor(2) if ctx.has(2) else None
    return _CONV[n][1](x, w, b, stride=tuple(strides), padding=padding, dilation=tuple(dilations), groups=group)


@rule("ConvTranspose", produces=(
      "F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d", "nn.ConvTranspose1d",
      "nn.ConvTranspose2d", "nn.ConvTranspose3d"))
def conv_transpose(ctx):
    x, w, n, kernel, strides, dilations, group = _window(ctx)
    output_padding = ints_attr(ctx, "output_padding", n, 0)
    pads = _deconv_pads(ctx, x, n, kernel, strides, dilations, output_padding)
    # an output_shape beyond the natural size is negative padding: output padding at the end
    output_padding = [op - min(e, 0) - min(b, 0) for op, b, e in zip(output_padding, pads[:n], pads[n:])]
    pads = [max(p, 0) for p in pads]
    begins, ends = pads[:n], pads[n:]
    # torch removes `padding` on both sides and adds output_padding at the end
    extra = [op + b - e for op, b, e in zip(output_padding, begins, ends)]
    crop = None
    if any(not 0 <= e < max(s, d) for e, s, d in zip(extra, strides, dilations)):
        crop, begins, extra = pads, [0] * n, list(output_padding)
    weight, bias = ctx.const(1), ctx.const(2)
    if weight is not None and (bias is not None or not ctx.has(2)) and weight.is_floating_point():
        module_cls = _DECONV[n][0]

        def make():
            m = module_cls(weight.shape[0], weight.shape[1] * group, tuple(weight.shape[2:]), stride=tuple(strides),
                           padding=tuple(begins), output_padding=tuple(extra), groups=group,
                           bias=bias is not None, dilation=tuple(dilations), dtype=weight.dtype)
            m.weight = _weight(weight)
            if bias is not None:
                m.bias = _weight(bias)
            return m
        y = ctx.module(make)(x)
    else:
        b = ctx.tensor(2) if ctx.has(2) else None
        y = _DECONV[n][1](x, w, b, stride=tuple(strides), padding=tuple(begins), output_padding=tuple(extra),
                          groups=group, dilation=tuple(dilations))
    if crop is not None:
        index = [slice(None), slice(None)]
        for i in range(n):
            size = y.shape[2 + i]
            index.append(slice(crop[i], size - crop[n + i]))
        y = y[tuple(index)]
    return y


def _deconv_pads(ctx, x, n, kernel, strides, dilations, output_padding) -> list[int]:
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    output_shape = ctx.attr("output_shape")
    if output_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        sizes = list(x.shape[2:])
        if output_shape:
            targets = [int(v) for v in output_shape][-n:]
        else:
            targets = [int(size) * s for size, s in zip(sizes, strides)]
        begins, ends = [], []
        for size, k, s, d, op, target in zip(sizes, kernel, strides, dilations, output_padding, targets):
            total = s * (int(size) - 1) + op + ((k - 1) * d + 1) - target
            if auto_pad == "SAME_UPPER":
                begins.append(total // 2)
                ends.append(total - total // 2)
            else:
                begins.append(total - total // 2)
                ends.append(total // 2)
        return begins + ends
    if auto_pad == "VALID":
        return [0] * (2 * n)
    return ints_attr(ctx, "pads", 2 * n, 0)


@rule("CausalConvWithState", produces=("F.conv1d", "F.pad", "F.silu", "torch.cat"))
def causal_conv_with_state(ctx):
    """Depthwise causal `F.conv1d` over [past_state, input] (zeros in place of a missing
    state), an optional SiLU; the next state is the last k-1 positions of that sequence."""
    x, w = ctx.tensor(0), ctx.tensor(1)
    k = int(w.shape[2])
    if ctx.has(3):
        x = torch.cat([ctx.tensor(3), x], dim=2)
    elif k > 1:
        x = F.pad(x, (k - 1, 0))
    activation = ctx.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        ctx.fail(f"activation {activation!r} is not one the operator defines")
    y = F.conv1d(x, w, ctx.tensor(2) if ctx.has(2) else None, groups=int(w.shape[0]))
    if activation != "none":
        y = F.silu(y)
    state = x[:, :, x.shape[2] - (k - 1):]
    return [y, state][:len(ctx.node.outputs)]


@rule("DeformConv", produces=("torchvision.ops.deform_conv2d", "F.pad"))
def deform_conv(ctx):
    """torchvision.ops.deform_conv2d, which takes the weight groups from the weight's shape and
    the offset groups from the offset's (the node's group / offset_group say the same)."""
    x, w, n, kernel, strides, dilations, group = _window(ctx)
    if n != 2:
        ctx.fail(f"DeformConv over {n} spatial dims has no PyTorch operator (torchvision's is 2-d)")
    optional.require("torchvision", "reading an ONNX DeformConv (torchvision.ops.deform_conv2d)")
    import torchvision

    pads = ints_attr(ctx, "pads", 4, 0)
    if pads[:2] != pads[2:]:
        x, pads = F.pad(x, torch_pad(pads)), [0] * 4
    bias, mask = (ctx.tensor(i) if ctx.has(i) else None for i in (3, 4))
    return torchvision.ops.deform_conv2d(x, ctx.tensor(2), w, bias, tuple(strides), tuple(pads[:2]),
                                         tuple(dilations), mask)
