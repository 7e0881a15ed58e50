"""Tensor.*: the `cast` family (emit/*/families/cast.py): bool, float, long, to, type_as."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


@family("Tensor.to")
def _to():
    return table("Tensor.to", [
        ("f32_to_i32", "x0.to(torch.int32)", [f(3, 4, low=-10, high=10)]),
        ("i64_to_f32", "x0.to(torch.float32) / 3.0", [i(2, 13)]),
        ("f32_to_f64", "x0.to(dtype=torch.float64)", [f(1, 3, 8, 8)]),
        ("to_other", "x0.to(x1)", [f(4, 5), i(2, dtype="i32")]),
        ("bool_to_f32", "x0.to(torch.float32)", [b(3, 4)]),
        ("f32_to_bool", "x0.to(torch.bool)", [f(3, 4, low=-1, high=1)]),
        ("f32_to_f16", "x0.to(torch.float16)", [f(2, 8)]),
        ("f32_to_u8", "x0.to(torch.uint8)", [f(12, low=0, high=200)]),
    ])


@family("Tensor.type_as")
def _type_as():
    return table("Tensor.type_as", [
        ("i64_as_f32", "x0.type_as(x1) + x1", [i(3, 4), f(3, 4)]),
        ("f32_as_i32", "x0.type_as(x1)", [f(2, 13, low=-9, high=9), i(1, dtype="i32")]),
        ("f32_as_f64", "x0.type_as(x1)", [f(1, 3, 8, 8), f(2, dtype="f64")]),
        ("bool_as_f32", "x0.type_as(x1) * x1", [b(4, 4), f(4, 4)]),
        ("same", "x0.type_as(x1)", [f(5), f(5)]),
    ])


def _cast(op: str, method: str):
    return table(op, [
        ("from_f32", f"x0.{method}()", [f(2, 3, 4, low=-5, high=5)]),
        ("from_i64", f"x0.{method}()", [i(3, 13, low=-3, high=3)]),
        ("from_bool", f"x0.{method}()", [b(4, 4)]),
        ("from_f64", f"x0.{method}()", [f(1, 3, 8, 8, dtype="f64", low=-2, high=2)]),
        ("from_i32_noncontig", f"x0.t().{method}()", [i(4, 5, low=-2, high=3, dtype="i32")]),
    ])


family("Tensor.float")(lambda: _cast("Tensor.float", "float"))


family("Tensor.long")(lambda: _cast("Tensor.long", "long"))


family("Tensor.bool")(lambda: _cast("Tensor.bool", "bool"))
