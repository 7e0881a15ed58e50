"""Indexing by tensors: `x[idx]`, `x[:, mask]`, and writes through them."""
from __future__ import annotations

from ..registry import rule


def _index(indices: list) -> tuple:
    """aten's index list (None where a dim is not indexed) as the Python index `x[...]` takes."""
    return tuple(slice(None) if i is None else i for i in indices)


@rule("index", produces=("Tensor.index",))
def _index_tensor(name, kw):
    return kw["self"][_index(kw["indices"])]


@rule("index_put_", "_index_put_impl_")
def _index_put_inplace(name, kw):
    """`x[idx] = v` (Tensor.index_put, as the Python-API capture records the assignment) and
    `x.index_put_((idx,), v, accumulate=True)`."""
    target = kw["self"]
    if kw.get("accumulate"):
        return target.index_put_(tuple(kw["indices"]), kw["values"], accumulate=True)
    target[_index(kw["indices"])] = kw["values"]
    return target


@rule("index_put", "_index_put_impl")
def _index_put(name, kw):
    return kw["self"].index_put(tuple(kw["indices"]), kw["values"], accumulate=bool(kw.get("accumulate")))
