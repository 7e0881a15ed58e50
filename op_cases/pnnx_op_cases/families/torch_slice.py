"""torch.*: the `slice` family (emit/*/families/slice.py): chunk, narrow, slice_scatter, split,
tensor_split, unbind."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


MO = {"tags": {"multi-output"}}


@family("torch.chunk")
def _chunk():
    return table("torch.chunk", [
        ("c2_d1", "torch.chunk(x0, 2, 1)", [f(1, 8, 4, 4)], MO),
        ("c3_dneg1_uneven", "torch.chunk(x0, 3, dim=-1)", [f(2, 4, 13)], MO),
        ("c4_d0", "torch.chunk(x0, chunks=4, dim=0)", [f(8, 3)], MO),
        ("c2_r1_uneven", "torch.chunk(x0, 2)", [f(7)], MO),
        ("use_one", "torch.chunk(x0, 3, 2)[1]", [f(1, 3, 12, 2)]),
    ])


@family("torch.split")
def _split():
    return table("torch.split", [
        ("s2_d1", "torch.split(x0, 2, 1)", [f(1, 8, 4, 4)], MO),
        ("s5_dneg1_uneven", "torch.split(x0, 5, dim=-1)", [f(2, 4, 13)], MO),
        ("sizes", "torch.split(x0, [3, 5, 8], dim=1)", [f(2, 16, 3)], MO),
        ("sizes_d0", "torch.split(x0, (1, 2))", [f(3, 4)], MO),
        ("use_one", "torch.split(x0, 2, 2)[0]", [f(1, 3, 4, 5)]),
    ])


@family("torch.tensor_split")
def _tensor_split():
    return table("torch.tensor_split", [
        ("n3_d1", "torch.tensor_split(x0, 3, dim=1)", [f(1, 13, 4)], MO),
        ("indices", "torch.tensor_split(x0, [1, 4], dim=-1)", [f(2, 3, 8)], MO),
        ("n2_d0", "torch.tensor_split(x0, 2)", [f(5, 4)], MO),
        ("indices_tuple", "torch.tensor_split(x0, (2, 3, 6), 0)", [f(12)], MO),
        ("n4_more_than_size", "torch.tensor_split(x0, 4, dim=1)", [f(2, 3)], MO),
    ])


@family("torch.unbind")
def _unbind():
    return table("torch.unbind", [
        ("d0", "torch.unbind(x0)", [f(3, 8, 8)], MO),
        ("d1", "torch.unbind(x0, 1)", [f(2, 4, 5)], MO),
        ("dneg1", "torch.unbind(x0, dim=-1)", [f(2, 3)], MO),
        ("size1", "torch.unbind(x0, 0)", [f(1, 13)], MO),
        ("int", "torch.unbind(x0, 1)", [i(2, 3)], MO),
    ])


@family("torch.narrow")
def _narrow():
    return table("torch.narrow", [
        ("d1", "torch.narrow(x0, 1, 1, 2)", [f(1, 8, 6, 6)]),
        ("dneg1", "torch.narrow(x0, -1, 3, 5)", [f(2, 4, 13)]),
        ("d0", "torch.narrow(x0, 0, 0, 1)", [f(6, 4)]),
        ("neg_start", "torch.narrow(x0, 1, -3, 2)", [f(2, 5)]),
        ("int", "torch.narrow(x0, 1, 1, 3)", [i(3, 5)]),
    ])


@family("torch.slice_scatter")
def _slice_scatter():
    return table("torch.slice_scatter", [
        ("d0", "torch.slice_scatter(x0, x1, 0, 2, 4)", [f(6, 4), f(2, 4)]),
        ("d1_step2", "torch.slice_scatter(x0, x1, dim=1, start=0, end=8, step=2)", [f(2, 8), f(2, 4)]),
        ("dneg1", "torch.slice_scatter(x0, x1, -1, 1, 3)", [f(1, 3, 4, 5), f(1, 3, 4, 2)]),
        ("default_whole", "torch.slice_scatter(x0, x1)", [f(3, 4), f(3, 4)]),
        ("int", "torch.slice_scatter(x0, x1, 1, 1, 2)", [i(3, 5), i(3, 1)]),
    ])
