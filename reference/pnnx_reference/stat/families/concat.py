"""Concatenation: every element read and written."""
from __future__ import annotations

from ..registry import Count, moved, rule


@rule("torch.cat", "torch.concat", "torch.stack")
def _concat(op) -> Count:
    return Count(0, moved(op))
