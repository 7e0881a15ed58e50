"""Running sums: one operation per input element."""
from __future__ import annotations

from ..registry import Count, moved, numel, rule


@rule("torch.cumsum", "Tensor.cumsum")
def _cumsum(op) -> Count:
    return Count(numel(op.inputs[0]), moved(op))
