"""Embedding lookups."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("embedding")
def _embedding(name, kw):
    padding_idx = None if kw["padding_idx"] == -1 else kw["padding_idx"]
    return F.embedding(kw["indices"], kw["weight"], padding_idx=padding_idx,
                       scale_grad_by_freq=kw["scale_grad_by_freq"], sparse=kw["sparse"])
