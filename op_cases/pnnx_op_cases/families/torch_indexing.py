"""torch.*: the `indexing` family (emit/*/families/indexing.py): as_strided, gather, index_select,
masked_select, scatter_add."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


@family("torch.as_strided")
def _as_strided():
    return table("torch.as_strided", [
        ("sub_block", "torch.as_strided(x0, (2, 2), (1, 2))", [f(3, 3)]),
        ("transpose_like", "torch.as_strided(x0, (4, 3), (1, 4))", [f(3, 4)]),
        ("offset", "torch.as_strided(x0, (2, 3), (3, 1), 2)", [f(12)]),
        ("overlapping_windows", "torch.as_strided(x0, (5, 4), (2, 1))", [f(16)]),
        ("r4", "torch.as_strided(x0, (1, 3, 2, 2), (48, 16, 4, 1))", [f(1, 3, 4, 4)]),
    ])


@family("torch.gather")
def _gather():
    return table("torch.gather", [
        ("d1", "torch.gather(x0, 1, x1)", [f(2, 13, 4), i(2, 5, 4, high=13)]),
        ("d0", "torch.gather(x0, 0, x1)", [f(6, 3), i(4, 3, high=6)]),
        ("dneg1", "torch.gather(x0, -1, x1)", [f(2, 3, 16), i(2, 3, 2, high=16)]),
        ("smaller_index", "torch.gather(x0, dim=1, index=x1)", [f(3, 8), i(2, 3, high=8)]),
        ("int_src", "torch.gather(x0, 1, x1)", [i(3, 5), i(3, 2, high=5)]),
    ])


@family("torch.index_select")
def _index_select():
    return table("torch.index_select", [
        ("d0", "torch.index_select(x0, 0, x1)", [f(6, 4), i(3, high=6)]),
        ("d1", "torch.index_select(x0, 1, x1)", [f(2, 13, 3), i(5, high=13)]),
        ("dneg1", "torch.index_select(x0, -1, x1)", [f(2, 3, 16), i(4, high=16)]),
        ("repeat_idx", "torch.index_select(x0, 0, x1)", [f(3, 2), i(7, high=3)]),
        ("int_src_i32_idx", "torch.index_select(x0, 1, x1)", [i(3, 5), i(2, high=5, dtype="i32")]),
        ("buffer_idx", "torch.index_select(x0, 1, self.idx)", [f(1, 8, 4)],
         {"init": "self.register_buffer('idx', torch.tensor([7, 0, 3]))"}),
    ])


@family("torch.masked_select")
def _masked_select():
    dyn = {"tags": {"dynamic"}}
    return table("torch.masked_select", [
        ("same_shape", "torch.masked_select(x0, x1)", [f(3, 8), b(3, 8)], dyn),
        ("bcast_mask", "torch.masked_select(x0, x1)", [f(2, 4, 5), b(5)], dyn),
        ("from_compare", "torch.masked_select(x0, x0 > 0)", [f(1, 3, 4, 4)], dyn),
        ("int", "torch.masked_select(x0, x1)", [i(4, 4), b(4, 4)], dyn),
        ("r1", "torch.masked_select(x0, x1)", [f(13), b(13)], dyn),
    ])


@family("torch.scatter_add")
def _scatter_add():
    return table("torch.scatter_add", [
        ("d0", "torch.scatter_add(x0, 0, x1, x2)", [f(5, 4), i(3, 4, high=5), f(3, 4)]),
        ("d1", "torch.scatter_add(x0, 1, x1, x2)", [f(2, 13), i(2, 6, high=13), f(2, 6)]),
        ("dneg1", "torch.scatter_add(x0, -1, x1, x2)", [f(2, 3, 8), i(2, 3, 4, high=8), f(2, 3, 4)]),
        ("src_larger", "torch.scatter_add(x0, 1, x1, x2)", [f(3, 5), i(3, 2, high=5), f(3, 6)]),
        ("int", "torch.scatter_add(x0, 0, x1, x2)", [i(4, 3), i(2, 3, high=4), i(2, 3)]),
    ])
