"""Pad -> `F.pad` (its modes as torch names them); CenterCropPad -> `Tensor.narrow` and `F.pad`."""
from __future__ import annotations

import torch.nn.functional as F

from .operands import axes as normalized, sizes, torch_pad
from .registry import RULES

rule = RULES.register


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "replicate", "wrap": "circular"}


@rule("Pad", produces=("F.pad", "Tensor.reshape", "Tensor.squeeze", "Tensor.unsqueeze"))
def pad(ctx):
    x = ctx.tensor(0)
    r = x.dim()
    mode = ctx.attr("mode", "constant")
    if mode not in _PAD_MODES:
        ctx.fail(f"pad mode {mode!r}")
    if ctx.opset >= 11:
        pads = [int(p) for p in ctx.ints(1, "pads")]
        value = ctx.scalar(2, "constant_value") if ctx.has(2) else 0
        dims = normalized(ctx.ints(3, "axes"), r) if ctx.has(3) else list(range(r))
    else:
        pads, value, dims = [int(p) for p in ctx.attr("pads")], float(ctx.attr("value", 0.0)), list(range(r))
    begins, ends = [0] * r, [0] * r
    for i, d in enumerate(dims):
        begins[d], ends[d] = pads[i], pads[len(dims) + i]
    first = next((d for d in range(r) if begins[d] or ends[d]), r)
    if first == r:
        return x
    pairs = torch_pad(begins[first:] + ends[first:])
    if mode == "constant":
        return F.pad(x, pairs, value=value if x.is_floating_point() else int(value))
    k = r - first
    if k > 3:
        ctx.fail(f"{mode} padding of {k} dims has no PyTorch operator (at most the last 3)")
    if r == k:  # PyTorch wants a leading (channel) dim it does not pad
        return F.pad(x.unsqueeze(0), pairs, mode=_PAD_MODES[mode]).squeeze(0)
    if r > k + 2:  # fold the leading dims into one
        lead = sizes(x)[:r - k]
        y = F.pad(x.reshape([-1] + sizes(x)[r - k:]), pairs, mode=_PAD_MODES[mode])
        return y.reshape(lead + sizes(y)[1:])
    return F.pad(x, pairs, mode=_PAD_MODES[mode])


@rule("CenterCropPad", produces=("F.pad", "Tensor.narrow"))
def center_crop_pad(ctx):
    """Crop (centered, the extra row at the end) or pad (centered, the extra row at the end) each
    listed axis to its target length."""
    x = ctx.tensor(0)
    targets = [int(v) for v in ctx.ints(1, "shape")]
    axes = [int(a) % x.dim() for a in (ctx.attr("axes") or range(x.dim()))]
    for a, target in zip(axes, targets):
        size = int(x.shape[a])
        if size > target:
            x = x.narrow(a, (size - target) // 2, target)
        elif size < target:
            before = (target - size) // 2
            pads = [0, 0] * (x.dim() - 1 - a) + [before, target - size - before]
            x = F.pad(x, pads)
    return x
