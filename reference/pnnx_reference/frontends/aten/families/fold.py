"""im2col / col2im back to F.unfold / F.fold."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("im2col", produces=("F.unfold",))
def _im2col(name, kw):
    return F.unfold(kw["self"], kw["kernel_size"], kw["dilation"], kw["padding"], kw["stride"])


@rule("col2im", produces=("F.fold",))
def _col2im(name, kw):
    return F.fold(kw["self"], kw["output_size"], kw["kernel_size"], kw["dilation"], kw["padding"],
                  kw["stride"])
