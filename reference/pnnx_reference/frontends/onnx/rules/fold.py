"""Col2Im -> `F.fold`."""
from __future__ import annotations

import torch.nn.functional as F

from .registry import RULES

rule = RULES.register


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
