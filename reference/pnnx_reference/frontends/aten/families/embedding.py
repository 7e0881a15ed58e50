"""Embedding lookups."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("embedding")
def _embedding(name, kw):
    """`max_norm` and `norm_type` come from the aten::embedding_renorm_ before the lookup
    (the TorchScript frontend joins the two: fusions.py), not from aten::embedding's schema."""
    padding_idx = None if kw["padding_idx"] == -1 else kw["padding_idx"]
    renorm = {k: kw[k] for k in ("max_norm", "norm_type") if kw.get(k) is not None}
    return F.embedding(kw["indices"], kw["weight"], padding_idx=padding_idx,
                       scale_grad_by_freq=kw["scale_grad_by_freq"], sparse=kw["sparse"], **renorm)
