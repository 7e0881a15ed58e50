"""The shared `aten::` rule table: an aten call back to the Python API, one small rule per
operator, used by every frontend that reads aten graphs (TorchScript `.pt`, torch.export
`.pt2`). A frontend names the call's arguments by the operator's schema and calls
`call(name, kwargs)` under the Python-API tracer, which records what the rule calls.
Operators without a rule go to the same-named `F.*`, `torch.*` or `Tensor.*` callable
(tensors positional, the rest by keyword: `generic.py`). The rules live in `families/`, one
module per operator family named as in the emitters.

A rule whose Python call is named differently from its aten operator says what it calls in
`produces=(...)` (`pnnx-cases where F.conv2d` finds `_convolution` by it); a rule without
the trait calls the same-named operator (aten `einsum` -> `torch.einsum`)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from . import families, spelling  # noqa: F401  (families registers every rule)
from .generic import _generic
from .registry import RULES
from .scalars import SCALAR_OPS

__all__ = ["RULES", "call", "_generic"]


def call(name: str, kwargs: dict, used: tuple[bool, ...] | None = None,
         spelled: spelling.Spelling | None = None):
    """Run aten operator `name` (`conv2d`, `add_`, ...) with its arguments named by its schema,
    through the Python API. `used` says which of the operator's results the graph reads (None:
    all); a rule registered with `outputs=True` gets it (`adaptive_max_pool2d` whose indices
    nobody reads is F.adaptive_max_pool2d without return_indices). `spelled` is the callable the
    model used where the graph records it (`spelling.py`)."""
    if not any(isinstance(v, torch.Tensor) for v in _flat(kwargs.values())) and name in SCALAR_OPS:
        return SCALAR_OPS[name](*kwargs.values())
    if _writes_into_a_view(name, kwargs):
        return _inplace_method(name, kwargs)
    if spelled is not None and (used is None or len(used) == 1) and _spelling_decides(spelled, name):
        result = spelling.call(spelled, name, kwargs)
        if result is not spelling.NOT_SPELLED:
            return result
    for key in (name, name.rstrip("_") if not name.startswith("_") else name):
        found = RULES.lookup(key)
        if found is not None:
            if found.traits.get("outputs"):
                return found.fn(key, kwargs, used)
            return found.fn(key, kwargs)
    return _generic(name, kwargs)


def _spelling_decides(spelled, name: str) -> bool:
    """An F.* function with a rule of its own (`avg_pool2d`: sizes in their short form) is
    written by that rule; elsewhere the spelling decides between Tensor.X, torch.X and F.X."""
    return spelled.kind == "method" or RULES.lookup(name) is None or not hasattr(F, spelled.name)


def _writes_into_a_view(name: str, kwargs: dict) -> bool:
    """`x[:, 1:3].mul_(2)`: an in-place call on a slice changes the tensor it was cut from, so
    it must stay in place (the capture records the write back as Tensor.slice_copy)."""
    target = next(iter(kwargs.values()), None)
    return (name.endswith("_") and not name.startswith("_") and isinstance(target, torch.Tensor)
            and target._is_view() and RULES.lookup(name) is None)


def _inplace_method(name: str, kwargs: dict):
    target, *rest = [v for k, v in kwargs.items() if k not in _NOT_PASSED]
    alpha = {"alpha": kwargs["alpha"]} if kwargs.get("alpha", 1) != 1 else {}
    return getattr(target, name)(*rest, **alpha)


_NOT_PASSED = {"memory_format", "layout", "device", "pin_memory", "non_blocking", "alpha"}


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v
