"""Tensor.*: the `elementwise` family (emit/*/families/elementwise.py): add, div, mul, pow, sub."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, binary, f, i


family("Tensor.add")(lambda: binary("Tensor.add", "{a}.add({b})", with_ints=True, extra=[
    ("alpha", "x0.add(x1, alpha=2.0)", [f(3, 4), f(3, 4)])]))


family("Tensor.sub")(lambda: binary("Tensor.sub", "{a}.sub({b})", with_ints=True, extra=[
    ("alpha", "x0.sub(x1, alpha=0.5)", [f(3, 4), f(4)])]))


family("Tensor.mul")(lambda: binary("Tensor.mul", "{a}.mul({b})", with_ints=True, extra=[
    ("bool", "x0.mul(x1)", [b(3, 4), b(3, 4)])]))


family("Tensor.div")(lambda: binary("Tensor.div", "{a}.div({b})", 0.5, 2.0, with_ints=True, extra=[
    ("floor", "x0.div(x1, rounding_mode='floor')", [f(3, 4, low=-4, high=4), f(3, 4, low=0.5, high=2)]),
    ("trunc", "x0.div(x1, rounding_mode='trunc')", [f(3, 4, low=-4, high=4), f(4, low=0.5, high=2)])]))


family("Tensor.pow")(lambda: binary("Tensor.pow", "{a}.pow({b})", 0.1, 2.0, scalar="2", extra=[
    ("scalar_half", "x0.pow(0.5)", [f(2, 13, low=0.0, high=3.0)]),
    ("scalar_neg", "x0.pow(-1.5)", [f(4, 4, low=0.5, high=2.0)]),
    ("int", "x0.pow(2)", [i(3, 4, low=-5, high=5)])]))
