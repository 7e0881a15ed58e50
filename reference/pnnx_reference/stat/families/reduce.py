"""Reductions: one operation per input element (a mean also divides each result)."""
from __future__ import annotations

from ..registry import Count, moved, numel, output, rule


def _read(op) -> int:
    return numel(op.inputs[0])


@rule("torch.sum", "Tensor.sum", "torch.cumsum", "Tensor.cumsum")
def _sum(op) -> Count:
    return Count(_read(op), moved(op))


@rule("torch.mean", "Tensor.mean")
def _mean(op) -> Count:
    return Count(_read(op) + output(op), moved(op))


@rule("torch.max", "Tensor.max", "torch.min", "Tensor.min", "torch.amax", "torch.amin")
def _extreme(op) -> Count:
    if len(op.inputs) > 1:  # torch.max(a, b): element-wise
        return Count(output(op), moved(op))
    return Count(_read(op), moved(op))


@rule("torch.argmax", "Tensor.argmax", "torch.argmin", "Tensor.argmin")
def _arg_extreme(op) -> Count:
    return Count(0, moved(op))
