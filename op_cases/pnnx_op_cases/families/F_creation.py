"""F.*: the `creation` family (emit/*/families/creation.py): one_hot."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import i, table


@family("F.one_hot")
def _one_hot():
    return table("F.one_hot", [
        ("r1_n10", "F.one_hot(x0, 10)", [i(6)]),
        ("r2_n4", "F.one_hot(x0, num_classes=4)", [i(3, 5, high=4)]),
        ("r3_n13", "F.one_hot(x0, 13)", [i(2, 3, 4, high=13)]),
        ("as_float", "F.one_hot(x0, 8).float() * 2.0", [i(5, high=8)]),
        ("n1", "F.one_hot(x0, 1)", [i(4, high=1)]),
    ])
