"""Patches: unfold copies them out, fold sums them back (an addition per element beyond the
output's)."""
from __future__ import annotations

from ..registry import Count, moved, numel, output, rule


@rule("F.unfold", "nn.Unfold")
def _unfold(op) -> Count:
    return Count(0, moved(op))


@rule("F.fold", "nn.Fold")
def _fold(op) -> Count:
    return Count(max(numel(op.inputs[0]) - output(op), 0), moved(op))
