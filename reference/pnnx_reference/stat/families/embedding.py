"""Embedding lookups: the indices read, each gathered row read and written."""
from __future__ import annotations

from ..registry import Count, numel, output, rule


@rule("nn.Embedding", "F.embedding")
def _embedding(op) -> Count:
    return Count(0, numel(op.inputs[0]) + 2 * output(op))
