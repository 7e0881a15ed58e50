"""Tensors made from values: every element written."""
from __future__ import annotations

from ..registry import Count, moved, rule


@rule("torch.arange", "Tensor.fill")
def _creation(op) -> Count:
    return Count(0, moved(op))
