"""Calls that make a tensor from another's shape and dtype (as emit/*/families/creation.py)."""
from __future__ import annotations

from ..registry import rule


@rule("copy", produces=("Tensor.copy",))
def _copy(name, kw):
    """The functional copy (.pt2): `self`'s shape and dtype, `src`'s values."""
    return kw["self"].clone().copy_(kw["src"])
