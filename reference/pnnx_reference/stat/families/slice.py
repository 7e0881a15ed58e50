"""Slices and splits are views: nothing computed, nothing moved. A write into a slice moves the
target, the source and the result."""
from __future__ import annotations

from ..registry import Count, moved, rule


_VIEWS = ("Tensor.select", "torch.select", "Tensor.slice", "torch.chunk", "Tensor.chunk", "torch.split", "Tensor.split",
          "torch.unbind", "Tensor.unbind", "torch.tensor_split", "torch.narrow", "Tensor.narrow")


@rule(*_VIEWS)
def _view(op) -> Count:
    return Count(0, 0)


@rule("Tensor.slice_copy")
def _slice_copy(op) -> Count:
    return Count(0, moved(op))
