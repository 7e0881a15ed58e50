"""Slicing and selecting along one dimension."""
from __future__ import annotations

import torch

from ..registry import rule

_INT64_MAX = 9223372036854775807


def _index_at(dim: int, item) -> tuple:
    if dim < 0:
        return (Ellipsis, item) + (slice(None),) * (-dim - 1)
    return (slice(None),) * dim + (item,)


@rule("slice")
def _slice(name, kw):
    start, end, step = kw.get("start"), kw.get("end"), kw.get("step", 1)
    end = None if end == _INT64_MAX else end
    start = None if start == 0 else start
    if start is None and end is None and step == 1:
        return kw["self"]  # a full slice is how tracing writes the `:` of other dims
    return kw["self"][_index_at(kw["dim"], slice(start, end, step))]


@rule("select")
def _select_method(name, kw):
    return kw["self"].select(kw["dim"], kw["index"])  # upstream writes Tensor.select


@rule("split_with_sizes")
def _split_with_sizes(name, kw):
    """torch.split(x, [2, 3], dim) is aten split_with_sizes (torch.export records it so when the
    Python spelling does not say which split was called): torch.split, as the Python door writes it."""
    return torch.split(kw["self"], list(kw["split_sizes"]), kw.get("dim", 0))
