"""The shared `aten::` rule table: an aten call back to the Python API, one small rule per
operator, used by every frontend that reads aten graphs (TorchScript `.pt`, torch.export
`.pt2`). A frontend names the call's arguments by the operator's schema and calls
`call(name, kwargs)` under the Python-API tracer, which records what the rule calls.
Operators without a rule go to the same-named `F.*`, `torch.*` or `Tensor.*` callable
(tensors positional, the rest by keyword: `generic.py`). The rules live in `families/`, one
module per operator family named as in the emitters."""
from __future__ import annotations

import torch

from . import families  # noqa: F401  (registers every rule)
from .generic import _generic
from .registry import RULES
from .scalars import SCALAR_OPS

__all__ = ["RULES", "call", "_generic"]


def call(name: str, kwargs: dict):
    """Run aten operator `name` (`conv2d`, `add_`, ...) with its arguments named by its schema,
    through the Python API."""
    if not any(isinstance(v, torch.Tensor) for v in _flat(kwargs.values())) and name in SCALAR_OPS:
        return SCALAR_OPS[name](*kwargs.values())
    found = RULES.lookup(name)
    if found is not None:
        return found.fn(name, kwargs)
    base = name.rstrip("_") if not name.startswith("_") else name
    found = RULES.lookup(base)
    if found is not None:
        return found.fn(base, kwargs)
    return _generic(name, kwargs)


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v
