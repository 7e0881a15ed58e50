"""im2col / col2im back to F.unfold / F.fold."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule
from ..written import short


@rule("im2col", produces=("F.unfold",))
def _im2col(name, kw):
    return F.unfold(kw["self"], *(short(kw[k]) for k in ("kernel_size", "dilation", "padding", "stride")))


@rule("col2im", produces=("F.fold",))
def _col2im(name, kw):
    return F.fold(kw["self"], *(short(kw[k]) for k in ("output_size", "kernel_size", "dilation", "padding",
                                                        "stride")))
