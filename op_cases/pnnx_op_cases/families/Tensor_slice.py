"""Tensor.*: the `slice` family (emit/*/families/slice.py): chunk, select, slice, slice_copy, split,
unbind."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


MO = {"tags": {"multi-output"}}


@family("Tensor.select")
def _select():
    return table("Tensor.select", [
        ("d1_i0", "x0.select(1, 0)", [f(1, 3, 8, 8)]),
        ("d0_i1", "x0.select(0, 1)", [f(2, 13, 5)]),
        ("dneg1_ineg1", "x0.select(-1, -1)", [f(2, 4, 6)]),
        ("d2_i3", "x0.select(2, 3)", [f(1, 3, 5, 7)]),
        ("r1", "x0.select(0, 4)", [f(9)]),
        ("int", "x0.select(1, 2)", [i(3, 4)]),
    ])


@family("Tensor.slice")
def _slice():
    return table("Tensor.slice", [
        ("d1_1_3", "x0[:, 1:3]", [f(1, 8, 6, 6)]),
        ("d2_step2", "x0[:, :, ::2]", [f(2, 3, 9)]),
        ("neg", "x0[..., -3:]", [f(2, 4, 13)]),
        ("multi_dim", "x0[:, 1:, 2:5, :-1]", [f(1, 4, 7, 8)]),
        ("d0_end_over", "x0[2:100]", [f(6, 4)]),
        ("size_based", "x0[:, : x0.size(1) // 2]", [f(2, 16, 3)]),
        ("ellipsis_step3", "x0[..., 1::3]", [f(2, 3, 16)]),
        ("int", "x0[1:, :2]", [i(4, 5)]),
    ])


@family("Tensor.slice_copy")
def _slice_copy():
    return table("Tensor.slice_copy", [
        ("d1", "torch.slice_copy(x0, 1, 1, 3)", [f(1, 8, 6, 6)]),
        ("d2_step2", "torch.slice_copy(x0, 2, 0, 9, 2)", [f(2, 3, 9)]),
        ("neg_start", "torch.slice_copy(x0, -1, -4)", [f(2, 4, 13)]),
        ("d0", "torch.slice_copy(x0, 0, 2, 5)", [f(6, 4)]),
        ("kw", "torch.slice_copy(x0, dim=1, start=0, end=2, step=1)", [f(3, 5)]),
    ])


@family("Tensor.chunk")
def _chunk():
    return table("Tensor.chunk", [
        ("c2_d1", "x0.chunk(2, 1)", [f(1, 8, 4, 4)], MO),
        ("c3_dneg1_uneven", "x0.chunk(3, dim=-1)", [f(2, 4, 13)], MO),
        ("c4_d0", "x0.chunk(4, 0)", [f(8, 3)], MO),
        ("c2_uneven_r1", "x0.chunk(2)", [f(7)], MO),
        ("c3_d2_use_one", "x0.chunk(3, 2)[1]", [f(1, 3, 12, 2)]),
        ("c1", "x0.chunk(1, 1)", [f(2, 5)], MO),
    ])


@family("Tensor.split")
def _split():
    return table("Tensor.split", [
        ("s2_d1", "x0.split(2, 1)", [f(1, 8, 4, 4)], MO),
        ("s5_dneg1_uneven", "x0.split(5, dim=-1)", [f(2, 4, 13)], MO),
        ("sizes_d1", "x0.split([3, 5, 8], dim=1)", [f(2, 16, 3)], MO),
        ("sizes_d0", "x0.split((1, 2), 0)", [f(3, 4)], MO),
        ("s4_r1", "x0.split(4)", [f(12)], MO),
        ("use_one", "x0.split(2, 2)[0]", [f(1, 3, 4, 5)]),
    ])


@family("Tensor.unbind")
def _unbind():
    return table("Tensor.unbind", [
        ("d0", "x0.unbind(0)", [f(3, 8, 8)], MO),
        ("d1", "x0.unbind(1)", [f(2, 4, 5)], MO),
        ("dneg1", "x0.unbind(-1)", [f(2, 3)], MO),
        ("size1", "x0.unbind(0)", [f(1, 13)], MO),
        ("int", "x0.unbind(dim=1)", [i(2, 3)], MO),
    ])
