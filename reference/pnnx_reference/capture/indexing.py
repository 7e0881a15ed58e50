"""`x[..., ::2, 1]` -> one `Tensor.slice` with plural dims/starts/ends/steps/selects
(dims after `...` are negative, as upstream writes them)."""
from __future__ import annotations

import torch

from ..errors import ConversionError

INT_MAX = 2147483647


def _dims(items: list) -> list[tuple[int, object]]:
    if Ellipsis not in items:
        return list(enumerate(items))
    split = items.index(Ellipsis)
    after = items[split + 1:]
    return list(enumerate(items[:split])) + [(d - len(after), i) for d, i in enumerate(after)]


def slice_params(tensor: torch.Tensor, index) -> tuple[str, dict]:
    items = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(i, (torch.Tensor, list, bool)) or i is None for i in items):
        raise ConversionError("advanced indexing (tensors, lists, None) is not supported by the capture yet")
    if sum(i is Ellipsis for i in items) > 1:
        raise ConversionError("an index with two `...` is invalid")
    params = {"dims": [], "ends": [], "selects": [], "starts": [], "steps": []}
    for dim, item in _dims(items):
        if item == slice(None):
            continue
        if isinstance(item, slice):
            start, stop, step = item.start, item.stop, item.step
            entry = (0 if start is None else int(start), INT_MAX if stop is None else int(stop),
                     1 if step is None else int(step), INT_MAX)
        else:
            entry = (0, INT_MAX, 1, int(item))
        for key, value in zip(("dims", "starts", "ends", "steps", "selects"), (dim, *entry)):
            params[key].append(value)
    return "Tensor.slice", params
