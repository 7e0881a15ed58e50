"""`x[..., ::2, 1]` -> one `Tensor.slice` with plural dims/starts/ends/steps/selects
(dims after `...` are negative, as upstream writes them); `x[:, idx]` / `x[mask]` -> one
`Tensor.index` with `expr=[None,@1]` (None a full slice, `@i` index tensor input i).

Any other index (`x[:, None, 1:3, idx]`, `x[[0, 2]]`) is split as torch itself applies it
(`decompose`): the slices and integers first (one Tensor.slice), a torch.unsqueeze per None,
then the index tensors and lists (one Tensor.index) on what is left."""
from __future__ import annotations

from dataclasses import dataclass

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


def is_advanced(index) -> bool:
    """Anything `slice_params` cannot say alone: tensors, lists, None."""
    items = list(index) if isinstance(index, tuple) else [index]
    return any(i is None or isinstance(i, (torch.Tensor, list)) for i in items)


@dataclass
class Decomposed:
    basic: tuple | None          # slices and integers, None when it selects everything
    unsqueeze: list[int]         # dims of the new axes, in the order to insert them
    advanced: list | None        # full slices and index tensors over what is left, or None


def decompose(tensor: torch.Tensor, index) -> Decomposed:
    """`index` as torch applies it: basic indexing, new axes, then advanced indexing."""
    items = [_as_index(i, tensor.device) for i in (list(index) if isinstance(index, tuple) else [index])]
    if any(isinstance(i, bool) for i in items):
        raise ConversionError("indexing with a Python bool is not supported by the capture yet")
    if sum(i is Ellipsis for i in items) > 1:
        raise ConversionError("an index with two `...` is invalid")
    items = _expand_ellipsis(tensor, items)
    basic, unsqueeze, advanced, position = [], [], [], 0
    for item in items:
        if item is None:
            unsqueeze.append(position)
            advanced.append(slice(None))
            position += 1
        elif isinstance(item, torch.Tensor):
            basic += [slice(None)] * _index_width(item)
            advanced.append(item)
            position += 1 if item.dtype != torch.bool else item.dim()
        elif isinstance(item, slice):
            basic.append(item)
            advanced.append(slice(None))
            position += 1
        else:
            basic.append(int(item))
    while basic and basic[-1] == slice(None):
        basic.pop()
    while advanced and not isinstance(advanced[-1], torch.Tensor):
        advanced.pop()
    return Decomposed(tuple(basic) or None, unsqueeze, advanced or None)


def _as_index(item, device):
    """A list of indices is an index tensor (torch reads it so)."""
    if isinstance(item, list):
        return torch.tensor(item, device=device)
    return item


def _expand_ellipsis(tensor: torch.Tensor, items: list) -> list:
    if Ellipsis not in items:
        return items
    split = items.index(Ellipsis)
    rest = items[:split] + items[split + 1:]
    fill = tensor.dim() - sum(_index_width(i) for i in rest if i is not None)
    return items[:split] + [slice(None)] * max(fill, 0) + items[split + 1:]


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


def sized_bounds(index) -> bool:
    """Whether a slice bound of `index` is a size traced from a tensor's shape (a SymInt)."""
    from .shapes import SymInt

    items = index if isinstance(index, tuple) else (index,)
    return not is_advanced(index) and any(
        isinstance(b, SymInt) for i in items if isinstance(i, slice) for b in (i.start, i.stop))


def per_dim(tensor: torch.Tensor, index) -> list[tuple[int, object]]:
    """(dim, slice or int) for each dim `index` does not keep whole, last dim first (dims after
    `...` negative, as slice_params writes them)."""
    items = list(index) if isinstance(index, tuple) else [index]
    rank = tensor.dim()
    found = [(d, item) for d, item in _dims(items) if item is not Ellipsis and item != slice(None)]
    return sorted(found, key=lambda pair: -(pair[0] % rank))


def at_dim(dim: int, item) -> tuple:
    """An index applying `item` at `dim` only (a negative dim counted from the end)."""
    if dim < 0:
        return (Ellipsis, item) + (slice(None),) * (-dim - 1)
    return (slice(None),) * dim + (item,)
