"""GridSample -> `F.grid_sample`; Col2Im -> `F.fold`."""
from __future__ import annotations

import torch.nn.functional as F

from .table import RULES

rule = RULES.register

_MODES = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
          "cubic": "bicubic"}


@rule("GridSample", produces=("F.grid_sample",))
def grid_sample(ctx):
    x, grid = ctx.tensor(0), ctx.tensor(1)
    mode = ctx.attr("mode", "bilinear" if ctx.opset < 20 else "linear")
    if mode not in _MODES or (_MODES[mode] == "bicubic" and x.dim() != 4):
        ctx.fail(f"GridSample mode {mode!r} on a rank-{x.dim()} input has no PyTorch operator")
    return F.grid_sample(x, grid, mode=_MODES[mode], padding_mode=ctx.attr("padding_mode", "zeros"),
                         align_corners=bool(int(ctx.attr("align_corners", 0))))


@rule("Col2Im", produces=("F.fold",))
def col2im(ctx):
    x = ctx.tensor(0)
    image, block = ctx.ints(1, "image_shape"), ctx.ints(2, "block_shape")
    if len(image) != 2:
        ctx.fail("Col2Im over other than 2 spatial dims has no PyTorch operator")
    pads = [int(p) for p in (ctx.attr("pads") or [0, 0, 0, 0])]
    if pads[:2] != pads[2:]:
        ctx.fail("Col2Im with uneven pads has no PyTorch operator")
    return F.fold(x, [int(v) for v in image], [int(v) for v in block],
                  dilation=tuple(int(v) for v in ctx.attr("dilations") or [1, 1]), padding=tuple(pads[:2]),
                  stride=tuple(int(v) for v in ctx.attr("strides") or [1, 1]))


@rule("AffineGrid", produces=("F.affine_grid",))
def affine_grid(ctx):
    theta = ctx.tensor(0)
    size = [int(v) for v in ctx.ints(1, "size")]
    return F.affine_grid(theta, size, align_corners=bool(int(ctx.attr("align_corners", 0))))


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
