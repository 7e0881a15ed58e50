"""Tensor.*: the `creation` family (emit/*/families/creation.py): copy, fill, new_empty, new_full,
new_ones, new_zeros."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


_UNINIT = "new_empty returns uninitialised memory; compare shape and dtype only"


@family("Tensor.copy")
def _copy():
    return table("Tensor.copy", [
        ("same_shape", "y = x0 * 2.0\ny.copy_(x1)\ny + x0", [f(1, 3, 8, 8), f(1, 3, 8, 8)]),
        ("broadcast_src", "y = x0 * 1.0\ny.copy_(x1)", [f(2, 4, 5), f(5)]),
        ("int_to_float", "y = x0 + 0.0\ny.copy_(x1)", [f(3, 4), i(3, 4)]),
        ("into_slice", "y = x0 * 1.0\ny[:, :2].copy_(x1)\ny", [f(2, 6), f(2, 2)], {"tags": {"inplace"}}),
        ("noncontig_src", "y = x0 * 1.0\ny.copy_(x1.t())", [f(4, 13), f(13, 4)]),
    ], tags={"inplace"})


@family("Tensor.fill")
def _fill():
    return table("Tensor.fill", [
        ("scalar", "y = x0 * 1.0\ny.fill_(2.5)", [f(1, 3, 8, 8)]),
        ("tensor_value", "y = x0 * 1.0\ny.fill_(x1.sum())", [f(2, 13), f(4)]),
        ("slice", "y = x0 + 0.0\ny[:, 1:3].fill_(-1.0)\ny", [f(2, 5, 4)]),
        ("int", "y = x0 + 0\ny.fill_(7)", [i(3, 4)]),
        ("zero", "y = x0 * 1.0\ny.fill_(0)\ny + x0", [f(16)]),
    ], tags={"inplace"})


@family("Tensor.new_empty")
def _new_empty():
    r = {"reasons": {"random": _UNINIT}}
    return table("Tensor.new_empty", [
        ("filled", "x0.new_empty((2, 3)).fill_(1.5) + x0.sum()", [f(4, 4)]),
        ("shape_of_input", "x0.new_empty(x0.shape).zero_() + x0", [f(1, 3, 8, 8)]),
        ("raw", "x0.new_empty((2, 5))", [f(3)], r),
        ("raw_dtype", "x0.new_empty((4,), dtype=torch.int64)", [f(2, 2)], r),
        ("size_based", "x0.new_empty(x0.size(0), 13).fill_(0.25)", [f(3, 2)]),
    ])


def _new_like(op: str, method: str, value_arg: str):
    return table(op, [
        ("literal", f"x0 + x0.new_{method}((2, 1, 4){value_arg})", [f(2, 3, 4)]),
        ("shape_of_input", f"x0.new_{method}(x0.shape{value_arg}) * x0", [f(1, 3, 8, 8)]),
        ("size_based", f"x0.new_{method}((x0.size(0), 13){value_arg})", [f(3, 2)]),
        ("dtype_i64", f"x0.new_{method}((2, 3){value_arg}, dtype=torch.int64)", [f(4)]),
        ("from_int", f"x0.new_{method}((5,){value_arg}) + x0", [i(5)]),
        ("r1_varargs", f"x0.new_{method}(7{value_arg})" if not value_arg else f"x0.new_{method}([7]{value_arg})", [f(2)]),
    ])


family("Tensor.new_full")(lambda: _new_like("Tensor.new_full", "full", ", 2.5"))


family("Tensor.new_ones")(lambda: _new_like("Tensor.new_ones", "ones", ""))


family("Tensor.new_zeros")(lambda: _new_like("Tensor.new_zeros", "zeros", ""))
