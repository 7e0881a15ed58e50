"""F.*: the `distance` family (emit/*/families/distance.py): cosine_similarity, pairwise_distance,
pdist."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("F.cosine_similarity")
def _cosine_similarity():
    return table("F.cosine_similarity", [
        ("d1_r4", "F.cosine_similarity(x0, x1)", [f(1, 3, 8, 8), f(1, 3, 8, 8)]),
        ("dneg1_r2", "F.cosine_similarity(x0, x1, dim=-1)", [f(4, 16), f(4, 16)]),
        ("d0_r1", "F.cosine_similarity(x0, x1, dim=0)", [f(13), f(13)]),
        ("bcast", "F.cosine_similarity(x0, x1, dim=1)", [f(2, 12, 5), f(1, 12, 1)]),
        ("eps", "F.cosine_similarity(x0, x1, dim=2, eps=0.1)", [f(1, 3, 4, low=-0.05, high=0.05), f(1, 3, 4)]),
    ])


@family("F.pairwise_distance")
def _pairwise_distance():
    return table("F.pairwise_distance", [
        ("p2_r2", "F.pairwise_distance(x0, x1)", [f(4, 16), f(4, 16)]),
        ("p1", "F.pairwise_distance(x0, x1, p=1.0)", [f(3, 13), f(3, 13)]),
        ("p3_eps_keepdim", "F.pairwise_distance(x0, x1, p=3.0, eps=1e-3, keepdim=True)", [f(5, 8), f(5, 8)]),
        ("bcast", "F.pairwise_distance(x0, x1)", [f(6, 12), f(1, 12)]),
        ("r1", "F.pairwise_distance(x0, x1)", [f(7), f(7)]),
        ("r3", "F.pairwise_distance(x0, x1, p=2.0)", [f(2, 3, 4), f(2, 3, 4)]),
    ])


@family("F.pdist")
def _pdist():
    return table("F.pdist", [
        ("p2", "F.pdist(x0)", [f(5, 8)]),
        ("p1", "F.pdist(x0, p=1.0)", [f(4, 13)]),
        ("p3", "F.pdist(x0, 3.0)", [f(6, 3)]),
        ("n2", "F.pdist(x0)", [f(2, 16)]),
        ("pinf", "F.pdist(x0, p=float('inf'))", [f(4, 4)]),
    ])
