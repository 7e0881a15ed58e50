"""Tensor.*: the `logic` family (emit/*/families/logic.py): masked_fill."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


@family("Tensor.masked_fill")
def _masked_fill():
    return table("Tensor.masked_fill", [
        ("scalar", "x0.masked_fill(x1, -1.0)", [f(1, 3, 8, 8), b(1, 3, 8, 8)]),
        ("bcast_mask", "x0.masked_fill(x1, 0.0)", [f(2, 4, 5, 5), b(1, 1, 5, 5)]),
        ("neg_inf_attn", "x0.masked_fill(x1, float('-inf')).softmax(-1)", [f(2, 6, 6), b(6, 6)]),
        ("tensor_value", "x0.masked_fill(x1, x2.sum())", [f(3, 13), b(3, 13), f(2)]),
        ("mask_from_compare", "x0.masked_fill(x0 > 0.5, 2.0)", [f(4, 12)]),
        ("int", "x0.masked_fill(x1, 3)", [i(3, 4), b(3, 4)]),
        ("inplace", "y = x0 * 1.0\ny.masked_fill_(x1, 9.0)\ny", [f(2, 5), b(2, 5)], {"tags": {"inplace"}}),
    ])
