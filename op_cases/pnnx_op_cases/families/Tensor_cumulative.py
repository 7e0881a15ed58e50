"""Tensor.*: the `cumulative` family (emit/*/families/cumulative.py): cumsum."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


family("Tensor.cumsum")(lambda: table("Tensor.cumsum", [
    ("d1", "x0.cumsum(1)", [f(1, 3, 8, 8)]), ("dneg1", "x0.cumsum(-1)", [f(2, 13)]),
    ("r1", "x0.cumsum(0)", [f(16)]), ("int", "x0.cumsum(dim=0)", [i(4, 3)]),
    ("dtype", "x0.cumsum(1, dtype=torch.float64)", [f(2, 5)]),
    ("bool", "x0.cumsum(1)", [b(2, 6)])]))
