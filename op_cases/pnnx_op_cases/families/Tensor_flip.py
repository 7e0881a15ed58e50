"""Tensor.*: the `flip` family (emit/*/families/flip.py): flip."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("Tensor.flip")
def _flip():
    return table("Tensor.flip", [
        ("d1", "x0.flip(1)", [f(1, 3, 8, 8)]),
        ("dneg1", "x0.flip(-1)", [f(2, 13)]),
        ("d23", "x0.flip(2, 3)", [f(2, 4, 5, 6)]),
        ("list", "x0.flip([0, 1])", [f(3, 4)]),
        ("r1", "x0.flip(0)", [f(16)]),
        ("int", "x0.flip(1)", [i(3, 4)]),
    ])
