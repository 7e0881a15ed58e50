"""CenterCropPad -> `Tensor.narrow` and `F.pad`."""
from __future__ import annotations

import torch.nn.functional as F

from .registry import RULES

rule = RULES.register


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
