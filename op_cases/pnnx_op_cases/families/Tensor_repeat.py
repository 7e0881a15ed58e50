"""Tensor.*: the `repeat` family (emit/*/families/repeat.py): expand, expand_as, repeat."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


@family("Tensor.expand")
def _expand():
    return table("Tensor.expand", [
        ("c_to_hw", "x0.expand(1, 3, 8, 8)", [f(1, 3, 1, 1)]),
        ("minus1", "x0.expand(-1, 4, -1)", [f(2, 1, 5)]),
        ("new_leading", "x0.expand(2, 3, 13)", [f(13)]),
        ("size_based", "x0.expand(x1.size(0), -1)", [f(1, 16), f(4, 3)]),
        ("bool", "x0.expand(3, 4)", [b(1, 4)]),
        ("then_add", "x0.expand(2, 6, 4) + 1.0", [f(2, 1, 4)]),
    ])


@family("Tensor.expand_as")
def _expand_as():
    return table("Tensor.expand_as", [
        ("c_to_hw", "x0.expand_as(x1)", [f(1, 3, 1, 1), f(2, 3, 8, 8)]),
        ("r1_to_r3", "x0.expand_as(x1)", [f(13), f(2, 4, 13)]),
        ("mid", "x0.expand_as(x1) * x1", [f(2, 1, 5), f(2, 4, 5)]),
        ("int", "x0.expand_as(x1)", [i(1, 4), f(3, 4)]),
        ("same", "x0.expand_as(x1)", [f(3, 4), f(3, 4)]),
    ])


@family("Tensor.repeat")
def _repeat():
    return table("Tensor.repeat", [
        ("r4_hw", "x0.repeat(1, 1, 2, 3)", [f(1, 3, 4, 4)]),
        ("new_leading", "x0.repeat(2, 1, 1)", [f(4, 5)]),
        ("r1", "x0.repeat(3)", [f(13)]),
        ("all_ones", "x0.repeat(1, 1)", [f(3, 4)]),
        ("tuple_arg", "x0.repeat((2, 2, 1))", [f(2, 3, 4)]),
        ("int", "x0.repeat(2, 2)", [i(3, 4)]),
    ])
