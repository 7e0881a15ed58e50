"""torch.*: the `flip` family (emit/*/families/flip.py): flip, roll."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("torch.flip")
def _flip():
    return table("torch.flip", [
        ("d1", "torch.flip(x0, [1])", [f(1, 3, 8, 8)]),
        ("dneg1", "torch.flip(x0, dims=(-1,))", [f(2, 13)]),
        ("d23", "torch.flip(x0, (2, 3))", [f(2, 4, 5, 6)]),
        ("all", "torch.flip(x0, [0, 1])", [f(3, 4)]),
        ("int", "torch.flip(x0, [1])", [i(3, 4)]),
    ])


@family("torch.roll")
def _roll():
    return table("torch.roll", [
        ("s1_d1", "torch.roll(x0, 1, 1)", [f(1, 3, 8, 8)]),
        ("neg_shift", "torch.roll(x0, -2, dims=-1)", [f(2, 13)]),
        ("flat", "torch.roll(x0, 3)", [f(3, 4)]),
        ("multi", "torch.roll(x0, shifts=(1, -2), dims=(2, 3))", [f(1, 4, 5, 6)]),
        ("over_size", "torch.roll(x0, 7, 0)", [f(5, 2)]),
        ("int", "torch.roll(x0, 1, 0)", [i(4, 3)]),
    ])
