"""F.*: the `linear` family (emit/*/families/linear.py): bilinear, linear."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("F.linear")
def _linear():
    rows = [
        ("r2_16to8", "F.linear(x0, self.w, self.b)", [f(4, 16)], {"params": {"w": (8, 16), "b": (8,)}}),
        ("r1_nobias", "F.linear(x0, self.w)", [f(13)], {"params": {"w": (12, 13)}}),
        ("r3_b2", "F.linear(x0, self.w, self.b)", [f(2, 7, 12)], {"params": {"w": (3, 12), "b": (3,)}}),
        ("r4", "F.linear(x0, self.w, self.b)", [f(1, 3, 5, 8)], {"params": {"w": (16, 8), "b": (16,)}}),
        ("out1", "F.linear(x0, self.w, self.b)", [f(6, 4)], {"params": {"w": (1, 4), "b": (1,)}}),
        ("weight_input", "F.linear(x0, x1)", [f(2, 5, 9), f(4, 9)]),
        ("noncontig", "x = x0.transpose(1, 2)\nF.linear(x, self.w, self.b)", [f(2, 8, 5)],
         {"params": {"w": (6, 8), "b": (6,)}}),
    ]
    return table("F.linear", rows)


@family("F.bilinear")
def _bilinear():
    rows = [
        ("r2", "F.bilinear(x0, x1, self.w, self.b)", [f(4, 5), f(4, 6)], {"params": {"w": (3, 5, 6), "b": (3,)}}),
        ("r2_nobias", "F.bilinear(x0, x1, self.w)", [f(2, 8), f(2, 8)], {"params": {"w": (4, 8, 8)}}),
        ("r3", "F.bilinear(x0, x1, self.w, self.b)", [f(2, 3, 4), f(2, 3, 7)], {"params": {"w": (13, 4, 7), "b": (13,)}}),
        ("out1", "F.bilinear(x0, x1, self.w, self.b)", [f(5, 3), f(5, 2)], {"params": {"w": (1, 3, 2), "b": (1,)}}),
        ("r1", "F.bilinear(x0, x1, self.w, self.b)", [f(6), f(5)], {"params": {"w": (2, 6, 5), "b": (2,)}}),
    ]
    return table("F.bilinear", rows)
