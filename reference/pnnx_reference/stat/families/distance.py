"""Distances: per vector element the difference, eps, power and sum; per distance the root."""
from __future__ import annotations

from ..registry import Count, moved, output, rule


@rule("F.pairwise_distance", "nn.PairwiseDistance")
def _pairwise_distance(op) -> Count:
    p = float(op.params.get("p", 2.0))
    depth = max(op.inputs[0].shape[-1] if op.inputs[0].shape else 1, op.inputs[1].shape[-1] if op.inputs[1].shape else 1)
    power, root = (0, 0) if p == 1 else (1, 4) if p == 2 else (4, 4)
    return Count(output(op) * (depth * (3 + power) + root), moved(op))
