"""Embedding lookups."""
from __future__ import annotations

import torch
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


_BAG_MODES = ("sum", "mean", "max")


@rule("embedding_bag", "_embedding_bag", outputs=True, produces=("F.embedding_bag",))
def _embedding_bag(name, kw, used):
    """F.embedding_bag, when the graph reads only the bags (aten also returns the offsets and
    the maxima's indices it keeps for the backward pass)."""
    if used is not None and any(used[1:]):
        return torch.embedding_bag(kw["weight"], kw["indices"], kw["offsets"], kw["scale_grad_by_freq"],
                                   kw["mode"], kw["sparse"], kw["per_sample_weights"],
                                   kw["include_last_offset"], kw["padding_idx"])
    padding_idx = None if kw.get("padding_idx") in (None, -1) else kw["padding_idx"]
    bags = F.embedding_bag(kw["indices"], kw["weight"], kw["offsets"], mode=_BAG_MODES[kw["mode"]],
                           scale_grad_by_freq=kw["scale_grad_by_freq"], sparse=kw["sparse"],
                           per_sample_weights=kw["per_sample_weights"],
                           include_last_offset=kw["include_last_offset"], padding_idx=padding_idx)
    return (bags, None, None, None) if used is not None and len(used) == 4 else bags
