"""Flips and rolls: every element read and written."""
from __future__ import annotations

from ..registry import Count, moved, rule


@rule("torch.flip", "Tensor.flip", "torch.roll", "Tensor.roll")
def _flip(op) -> Count:
    return Count(0, moved(op))
