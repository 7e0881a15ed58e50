"""F.*: the `shuffle` family (emit/*/families/shuffle.py): pixel_shuffle, pixel_unshuffle."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("F.pixel_shuffle")
def _pixel_shuffle():
    return table("F.pixel_shuffle", [
        ("r2_c12", "F.pixel_shuffle(x0, 2)", [f(1, 12, 4, 5)]),
        ("r3_c9", "F.pixel_shuffle(x0, 3)", [f(2, 9, 3, 3)]),
        ("r2_c16_b2", "F.pixel_shuffle(x0, 2)", [f(2, 16, 3, 4)]),
        ("r1_identity", "F.pixel_shuffle(x0, 1)", [f(1, 13, 4, 4)]),
        ("r2_c4_to1", "F.pixel_shuffle(x0, 2)", [f(1, 4, 5, 7)]),
        ("unbatched", "F.pixel_shuffle(x0, 2)", [f(8, 3, 3)], {"tags": {"unbatched"}}),
    ])


@family("F.pixel_unshuffle")
def _pixel_unshuffle():
    return table("F.pixel_unshuffle", [
        ("r2_c3", "F.pixel_unshuffle(x0, 2)", [f(1, 3, 8, 10)]),
        ("r3_c1", "F.pixel_unshuffle(x0, 3)", [f(2, 1, 9, 6)]),
        ("r2_c4_b2", "F.pixel_unshuffle(x0, 2)", [f(2, 4, 6, 4)]),
        ("r1_identity", "F.pixel_unshuffle(x0, 1)", [f(1, 13, 4, 4)]),
        ("r4_c1", "F.pixel_unshuffle(x0, 4)", [f(1, 1, 8, 8)]),
        ("unbatched", "F.pixel_unshuffle(x0, 2)", [f(3, 4, 6)], {"tags": {"unbatched"}}),
    ])
