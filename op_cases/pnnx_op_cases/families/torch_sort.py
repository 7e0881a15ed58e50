"""torch.*: the `sort` family (emit/*/families/sort.py): argsort, sort, topk."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


MO = {"tags": {"multi-output"}}


@family("torch.topk")
def _topk():
    return table("torch.topk", [
        ("k3_last", "torch.topk(x0, 3)", [f(2, 13)], MO),
        ("k2_d1", "torch.topk(x0, 2, dim=1)", [f(1, 8, 5)], MO),
        ("k4_smallest", "torch.topk(x0, 4, largest=False)", [f(3, 16)], MO),
        ("k1_d0", "torch.topk(x0, k=1, dim=0)", [f(12, 3)], MO),
        ("values_only_unsorted", "torch.topk(x0, 3, sorted=True)[0]", [f(2, 4, 6)]),
        ("int", "torch.topk(x0, 2)", [i(3, 7, high=1000)], MO),
    ])


@family("torch.sort")
def _sort():
    return table("torch.sort", [
        ("last", "torch.sort(x0)", [f(2, 13)], MO),
        ("d1_desc", "torch.sort(x0, dim=1, descending=True)", [f(1, 8, 5)], MO),
        ("d0", "torch.sort(x0, 0)", [f(12, 3)], MO),
        ("stable_values", "torch.sort(x0, stable=True)[0]", [f(4, 16)]),
        ("int", "torch.sort(x0, -1)", [i(3, 7, high=1000)], MO),
    ])


@family("torch.argsort")
def _argsort():
    return table("torch.argsort", [
        ("last", "torch.argsort(x0)", [f(2, 13)]),
        ("d1_desc", "torch.argsort(x0, dim=1, descending=True)", [f(1, 8, 5)]),
        ("d0", "torch.argsort(x0, 0)", [f(12, 3)]),
        ("stable", "torch.argsort(x0, stable=True)", [f(4, 16)]),
        ("int", "torch.argsort(x0, -1)", [i(3, 7, high=1000)]),
    ])
