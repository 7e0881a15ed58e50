"""`x[..., ::2, 1]` -> one `Tensor.slice` with plural dims/starts/ends/steps/selects
(dims after `...` are negative, as upstream writes them); `x[:, idx]` / `x[mask]` -> one
`Tensor.index` with `expr=[None,@1]` (None a full slice, `@i` index tensor input i)."""
from __future__ import annotations

import torch

from ...errors import ConversionError

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


def select_index(arguments: dict) -> tuple:
    """`x.select(dim, i)` as the index `x[:, ..., i]` it equals."""
    dim, item = int(arguments["dim"]), int(arguments["index"])
    if dim < 0:
        return (Ellipsis, item) + (slice(None),) * (-dim - 1)
    return (slice(None),) * dim + (item,)


def has_tensor_index(index) -> bool:
    items = list(index) if isinstance(index, tuple) else [index]
    return any(isinstance(i, torch.Tensor) for i in items)


def _index_width(item) -> int:
    """How many dims of the indexed tensor one index item consumes."""
    if isinstance(item, torch.Tensor) and item.dtype == torch.bool:
        return max(item.dim(), 1)
    return 1


def index_items(tensor: torch.Tensor, index) -> list:
    """The index as explicit per-position items, `...` expanded into full slices and trailing
    full slices dropped; refuses what `Tensor.index` cannot say."""
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        if item is None or isinstance(item, (list, bool)):
            raise ConversionError("indexing with None, lists or bools next to tensors is not supported by the capture yet")
        if isinstance(item, slice) and item != slice(None):
            raise ConversionError("indexing with a tensor next to a partial slice is not supported by the capture yet")
    if sum(i is Ellipsis for i in items) > 1:
        raise ConversionError("an index with two `...` is invalid")
    if Ellipsis in items:
        split = items.index(Ellipsis)
        rest = items[:split] + items[split + 1:]
        fill = tensor.dim() - sum(_index_width(i) for i in rest)
        items = items[:split] + [slice(None)] * max(fill, 0) + items[split + 1:]
    while items and not isinstance(items[-1], torch.Tensor) and items[-1] == slice(None):
        items.pop()
    return items


def index_expr(items: list, first_input: int, device=None) -> tuple[str, list[torch.Tensor]]:
    """`[None,@1,@2]` and the index tensors it names, numbered from `first_input`. An integer
    next to index tensors is an index tensor as well (same result), so it becomes a constant:
    a pnnx.param list keeps only elements of its last element's kind, `[@1,1]` would lose `@1`."""
    parts, tensors = [], []
    for item in items:
        if isinstance(item, slice):
            parts.append("None")
            continue
        if not isinstance(item, torch.Tensor):
            item = torch.tensor(int(item), device=device)
        parts.append(f"@{first_input + len(tensors)}")
        tensors.append(item)
    return "[" + ",".join(parts) + "]", tensors
