"""F.*: the `fold` family (emit/*/families/fold.py): fold, unfold."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("F.unfold")
def _unfold():
    rows = [
        ("k3", "F.unfold(x0, 3)", [f(1, 3, 8, 8)]),
        ("k2_s2", "F.unfold(x0, kernel_size=2, stride=2)", [f(2, 4, 8, 6)]),
        ("k3_p1_d2", "F.unfold(x0, kernel_size=3, padding=1, dilation=2)", [f(1, 13, 7, 9)]),
        ("k2x3_s1x2", "F.unfold(x0, kernel_size=(2, 3), stride=(1, 2))", [f(1, 8, 6, 9)]),
        ("c1_k1", "F.unfold(x0, 1)", [f(1, 1, 5, 5)]),
        ("unbatched", "F.unfold(x0, 2)", [f(3, 6, 6)], {"tags": {"unbatched"}}),
    ]
    return table("F.unfold", rows)


@family("F.fold")
def _fold():
    rows = [
        ("o8_k3", "F.fold(x0, output_size=8, kernel_size=3)", [f(1, 27, 36)]),
        ("o8x6_k2_s2", "F.fold(x0, output_size=(8, 6), kernel_size=2, stride=2)", [f(2, 16, 12)]),
        ("o7x9_k3_p1_d2", "F.fold(x0, (7, 9), 3, padding=1, dilation=2)", [f(1, 9, 35)]),
        ("c13_k1", "F.fold(x0, 5, 1)", [f(1, 13, 25)]),
        ("k2x3_s1x2", "F.fold(x0, (6, 9), (2, 3), stride=(1, 2))", [f(1, 48, 20)]),
        ("unbatched", "F.fold(x0, 4, 2, stride=2)", [f(12, 4)], {"tags": {"unbatched"}}),
    ]
    return table("F.fold", rows)
