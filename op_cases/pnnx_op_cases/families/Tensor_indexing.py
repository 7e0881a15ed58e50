"""Tensor.*: the `indexing` family (emit/*/families/indexing.py): gather, index, index_put."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


@family("Tensor.index")
def _index():
    return table("Tensor.index", [
        ("d0_idx", "x0[x1]", [f(6, 4), i(3, high=6)]),
        ("d1_idx", "x0[:, x1]", [f(2, 13, 3), i(5, high=13)]),
        ("bool_mask", "x0[x1]", [f(4, 5), b(4, 5)], {"tags": {"dynamic"}}),
        ("two_idx", "x0[x1, x2]", [f(5, 6), i(4, high=5), i(4, high=6)]),
        ("idx_r2", "x0[x1]", [f(8, 3), i(2, 3, high=8)]),
        ("last_dim", "x0[..., x1]", [f(2, 3, 16), i(4, high=16)]),
        ("int_src", "x0[x1]", [i(6, 4), i(3, high=6)]),
    ])


@family("Tensor.index_put")
def _index_put():
    return table("Tensor.index_put", [
        ("d0_tensor_values", "x0.index_put((x1,), x2)", [f(6, 4), i(3, high=6), f(3, 4)]),
        ("scalar_value_setitem", "y = x0 * 1.0\ny[x1] = 0.0\ny", [f(6, 4), i(2, high=6)], {"tags": {"inplace"}}),
        ("accumulate", "x0.index_put((x1,), x2, accumulate=True)", [f(5, 3), i(6, high=5), f(6, 3)]),
        ("two_idx", "x0.index_put((x1, x2), x3)", [f(5, 6), i(4, high=5), i(4, high=6), f(4)]),
        ("bool_mask_setitem", "y = x0 * 1.0\ny[x1] = 1.0\ny", [f(4, 5), b(4, 5)], {"tags": {"inplace"}}),
        ("inplace_method", "y = x0 * 1.0\ny.index_put_((x1,), x2)\ny", [f(8, 2), i(3, high=8), f(2)],
         {"tags": {"inplace"}}),
    ])


@family("Tensor.gather")
def _gather():
    return table("Tensor.gather", [
        ("d1", "x0.gather(1, x1)", [f(2, 13, 4), i(2, 5, 4, high=13)]),
        ("d0", "x0.gather(0, x1)", [f(6, 3), i(4, 3, high=6)]),
        ("dneg1", "x0.gather(-1, x1)", [f(2, 3, 16), i(2, 3, 2, high=16)]),
        ("smaller_index", "x0.gather(1, x1)", [f(3, 8), i(2, 3, high=8)]),
        ("int_src", "x0.gather(1, x1)", [i(3, 5), i(3, 2, high=5)]),
    ])
