"""Gathers and scatters: data moved, nothing computed."""
from __future__ import annotations

from ..registry import Count, moved, rule


@rule("torch.gather", "Tensor.gather", "Tensor.index", "Tensor.index_put")
def _indexing(op) -> Count:
    return Count(0, moved(op))
