"""Activations whose aten name differs from the F.* name."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("log_sigmoid")
def _logsigmoid(name, kw):
    return F.logsigmoid(kw["self"])
