"""Tensor.*: the `identity` family (emit/*/families/identity.py): contiguous."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("Tensor.contiguous")
def _contiguous():
    return table("Tensor.contiguous", [
        ("after_transpose", "x0.transpose(1, 2).contiguous()", [f(1, 3, 8, 8)]),
        ("after_permute", "x0.permute(0, 2, 3, 1).contiguous()", [f(2, 13, 4, 5)]),
        ("already", "x0.contiguous()", [f(4, 12)]),
        ("then_view", "x0.transpose(0, 1).contiguous().view(-1)", [f(3, 5)]),
        ("after_slice", "x0[:, ::2].contiguous()", [f(2, 16, 3)]),
    ])
