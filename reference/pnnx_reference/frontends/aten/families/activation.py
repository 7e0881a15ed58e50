"""Activations whose aten name differs from the F.* name."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("log_sigmoid", produces=("F.logsigmoid",))
def _logsigmoid(name, kw):
    return F.logsigmoid(kw["self"])


@rule("_softmax", "_log_softmax", produces=("F.softmax", "F.log_softmax"))
def _softmax(name, kw):
    """The core-ATen form a decomposed (.pt2) graph keeps."""
    fn = F.softmax if name == "_softmax" else F.log_softmax
    return fn(kw["self"], kw["dim"])
