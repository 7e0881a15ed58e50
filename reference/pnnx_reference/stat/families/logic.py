"""Comparisons: one operation per output element; masked writes: data moved."""
from __future__ import annotations

from ..registry import Count, moved, output, rule

_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


@rule(*(f"torch.{c}" for c in _COMPARE), *(f"Tensor.{c}" for c in _COMPARE))
def _compare(op) -> Count:
    return Count(output(op), moved(op))


@rule("Tensor.masked_fill")
def _masked_fill(op) -> Count:
    """A masked write: data moved, nothing computed."""
    return Count(0, moved(op))
