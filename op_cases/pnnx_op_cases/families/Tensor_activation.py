"""Tensor.*: the `activation` family (emit/*/families/activation.py): clamp, sigmoid, softmax."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table, unary


@family("Tensor.softmax")
def _softmax():
    return table("Tensor.softmax", [
        ("d1", "x0.softmax(1)", [f(1, 13, 8, 8, low=-4, high=4)]),
        ("dneg1", "x0.softmax(dim=-1)", [f(2, 4, 16, low=-4, high=4)]),
        ("d0_r1", "x0.softmax(0)", [f(20, low=-4, high=4)]),
        ("noncontig", "x0.transpose(1, 2).softmax(-1)", [f(2, 5, 8, low=-4, high=4)]),
        ("dtype", "x0.softmax(-1, dtype=torch.float64)", [f(3, 10)]),
    ])


@family("Tensor.clamp")
def _clamp():
    return table("Tensor.clamp", [
        ("min_max", "x0.clamp(-0.5, 0.5)", [f(1, 3, 8, 8)]),
        ("min_only", "x0.clamp(min=0.0)", [f(2, 13)]),
        ("max_only", "x0.clamp(max=0.25)", [f(16)]),
        ("tensor_bounds", "x0.clamp(x1, x2)", [f(3, 4), f(3, 4, low=-1, high=0), f(4, low=0, high=1)]),
        ("int", "x0.clamp(2, 7)", [i(3, 5)]),
        ("noncontig", "x0.t().clamp(min=-0.1, max=0.3)", [f(4, 6)]),
    ])


family("Tensor.sigmoid")(lambda: unary("Tensor.sigmoid", "{x}.sigmoid()", -6.0, 6.0))
