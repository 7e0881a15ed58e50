"""Fully connected layers: two operations per multiply-accumulate."""
from __future__ import annotations

from ..registry import Count, moved, output, rule


@rule("nn.Linear", "F.linear")
def _linear(op) -> Count:
    features = op.attrs["weight"].shape[1] if "weight" in op.attrs else op.input("weight", 1).shape[1]
    bias = "bias" in op.attrs or "bias" in op.inputnames
    return Count(output(op) * (2 * features + bias), moved(op))
