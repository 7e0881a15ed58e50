"""nn.*: the `distance` family (emit/*/families/distance.py): CosineSimilarity, PairwiseDistance."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


@family("nn.CosineSimilarity")
def cosine_similarity():
    op = "nn.CosineSimilarity"
    yield module_case(op, "dim1", "nn.CosineSimilarity()", [rand(3, 8), rand(3, 8)], smoke=True)
    yield module_case(op, "dim_m1", "nn.CosineSimilarity(dim=-1)", [rand(2, 4, 5), rand(2, 4, 5)])
    yield module_case(op, "dim0", "nn.CosineSimilarity(dim=0)", [rand(6, 3), rand(6, 3)])
    yield module_case(op, "broadcast", "nn.CosineSimilarity()", [rand(3, 8), rand(1, 8)])
    yield module_case(op, "eps0.5", "nn.CosineSimilarity(eps=0.5)",
                      [rand(3, 8, low=-0.05, high=0.05), rand(3, 8)])


@family("nn.PairwiseDistance")
def pairwise_distance():
    op = "nn.PairwiseDistance"
    yield module_case(op, "p2", "nn.PairwiseDistance()", [rand(3, 8), rand(3, 8)], smoke=True)
    yield module_case(op, "p1", "nn.PairwiseDistance(p=1.0)", [rand(3, 8), rand(3, 8)])
    yield module_case(op, "p3_keepdim", "nn.PairwiseDistance(p=3.0, keepdim=True)",
                      [rand(3, 8), rand(3, 8)])
    yield module_case(op, "eps0.1", "nn.PairwiseDistance(eps=0.1)", [rand(4, 5), rand(4, 5)])
    yield module_case(op, "broadcast", "nn.PairwiseDistance()", [rand(3, 8), rand(1, 8)])
    yield module_case(op, "unbatched", "nn.PairwiseDistance()", [rand(8), rand(8)],
                      tags={"unbatched"})
