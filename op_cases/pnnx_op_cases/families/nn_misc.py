"""Shape and rearrangement modules, distances, and the dropout family."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


@family("nn.Flatten")
def flatten():
    op = "nn.Flatten"
    x = rand(2, 3, 4, 5)
    yield module_case(op, "default", "nn.Flatten()", [x], smoke=True)
    yield module_case(op, "all", "nn.Flatten(0, -1)", [x])
    yield module_case(op, "s1_e2", "nn.Flatten(1, 2)", [x])
    yield module_case(op, "s_m2", "nn.Flatten(-2)", [x])
    yield module_case(op, "r2", "nn.Flatten()", [rand(3, 7)])
    yield module_case(op, "noncontiguous", "nn.Flatten()", [x], pre="x0 = x0.transpose(1, 3)")


@family("nn.Unflatten")
def unflatten():
    op = "nn.Unflatten"
    yield module_case(op, "dim1", "nn.Unflatten(1, (3, 4))", [rand(2, 12, 5)], smoke=True)
    yield module_case(op, "dim_m1", "nn.Unflatten(-1, (2, 2, 3))", [rand(2, 12)])
    yield module_case(op, "infer", "nn.Unflatten(1, (-1, 4))", [rand(2, 12)])
    yield module_case(op, "dim0_r1", "nn.Unflatten(0, (4, 3))", [rand(12)])


@family("nn.PixelShuffle")
def pixel_shuffle():
    op = "nn.PixelShuffle"
    yield module_case(op, "r2", "nn.PixelShuffle(2)", [rand(1, 16, 3, 4)], smoke=True)
    yield module_case(op, "r3", "nn.PixelShuffle(3)", [rand(1, 18, 2, 3)])
    yield module_case(op, "r2_b2_c4", "nn.PixelShuffle(2)", [rand(2, 4, 3, 3)])
    yield module_case(op, "r2_unbatched", "nn.PixelShuffle(2)", [rand(12, 3, 2)], tags={"unbatched"})
    yield module_case(op, "r1", "nn.PixelShuffle(1)", [rand(1, 3, 4, 4)])


@family("nn.PixelUnshuffle")
def pixel_unshuffle():
    op = "nn.PixelUnshuffle"
    yield module_case(op, "r2", "nn.PixelUnshuffle(2)", [rand(1, 4, 6, 8)], smoke=True)
    yield module_case(op, "r3", "nn.PixelUnshuffle(3)", [rand(1, 2, 6, 9)])
    yield module_case(op, "r2_b2_c1", "nn.PixelUnshuffle(2)", [rand(2, 1, 4, 6)])
    yield module_case(op, "r2_unbatched", "nn.PixelUnshuffle(2)", [rand(3, 4, 4)], tags={"unbatched"})


@family("nn.ChannelShuffle")
def channel_shuffle():
    op = "nn.ChannelShuffle"
    yield module_case(op, "g2", "nn.ChannelShuffle(2)", [rand(1, 8, 3, 4)], smoke=True)
    yield module_case(op, "g3", "nn.ChannelShuffle(3)", [rand(1, 12, 2, 3)])
    yield module_case(op, "g4_b2", "nn.ChannelShuffle(4)", [rand(2, 16, 2, 2)])
    yield module_case(op, "g2_r3", "nn.ChannelShuffle(2)", [rand(2, 4, 5)])
    yield module_case(op, "g13", "nn.ChannelShuffle(13)", [rand(1, 26, 2, 2)])
    yield module_case(op, "g3_r3", "nn.ChannelShuffle(3)", [rand(2, 6, 5)])
    yield module_case(op, "g2_r5", "nn.ChannelShuffle(2)", [rand(1, 4, 3, 5, 6)])
    yield module_case(op, "g3_r5_b2", "nn.ChannelShuffle(3)", [rand(2, 6, 2, 3, 4)])


@family("nn.Fold")
def fold():
    op = "nn.Fold"
    # input (N, C * prod(kernel), L) where L is the number of sliding blocks
    yield module_case(op, "k2_o4", "nn.Fold((4, 4), 2)", [rand(1, 12, 9)], smoke=True)
    yield module_case(op, "k2_s2_o4", "nn.Fold(4, 2, stride=2)", [rand(2, 8, 4)])
    yield module_case(op, "k3_p1_o5x6", "nn.Fold((5, 6), 3, padding=1)", [rand(1, 9, 30)])
    yield module_case(op, "k2_d2_o6", "nn.Fold(6, 2, dilation=2)", [rand(1, 4, 16)])
    yield module_case(op, "k2x3_o4x5", "nn.Fold((4, 5), (2, 3))", [rand(1, 6, 9)])
    yield module_case(op, "unbatched", "nn.Fold(4, 2)", [rand(8, 9)], tags={"unbatched"})


@family("nn.Unfold")
def unfold():
    op = "nn.Unfold"
    x = rand(1, 3, 6, 7)
    yield module_case(op, "k2", "nn.Unfold(2)", [x], smoke=True)
    yield module_case(op, "k3_s2_p1", "nn.Unfold(3, stride=2, padding=1)", [x])
    yield module_case(op, "k2_d2", "nn.Unfold(2, dilation=2)", [x])
    yield module_case(op, "k2x3", "nn.Unfold((2, 3))", [x])
    yield module_case(op, "k2_b2", "nn.Unfold(2)", [rand(2, 4, 4, 5)])
    yield module_case(op, "unbatched", "nn.Unfold(2)", [rand(3, 4, 5)], tags={"unbatched"})


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


_DROPOUT_WHY = "eval mode makes it the identity; its random mask only exists in training"
_DROPOUTS = {
    "nn.Dropout": [(2, 8), (1, 3, 4, 5)],
    "nn.Dropout2d": [(1, 4, 3, 5), (4, 3, 5)],
    "nn.Dropout3d": [(1, 4, 2, 3, 4), (4, 2, 3, 4)],
    "nn.AlphaDropout": [(2, 8), (1, 3, 4, 5)],
}


@family("nn.Dropout", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout")
def dropouts():
    why = {"training-only": _DROPOUT_WHY}
    for op, shapes in _DROPOUTS.items():
        yield module_case(op, "p0.5", f"{op}()", [rand(*shapes[0])], reasons=why, smoke=True)
        yield module_case(op, "p0.2_inplace" if op != "nn.AlphaDropout" else "p0.2",
                          f"{op}(0.2{', inplace=True' if op != 'nn.AlphaDropout' else ''})",
                          [rand(*shapes[1])], reasons=why)
        # what an exporter must keep: dropout between two real ops
        yield module_case(op, "between_ops", f"{op}(0.3)", [rand(*shapes[0])], reasons=why,
                          pre="x0 = x0 * 2", call="self.m(x0) + 1")


@family("nn.Dropout", "nn.Unfold", "nn.Fold")
def ncnn_forms():
    """Forms the hand-written ncnn export tests held: a dropout removed between real ops in a
    batch-1 graph, im2col/col2im with every geometry argument at once."""
    yield module_case("nn.Dropout", "p0.5_then_relu_b1", "nn.Dropout(0.5)", [rand(1, 6, 7)],
                      reasons={"training-only": _DROPOUT_WHY}, call="F.relu(self.m(x0))")
    yield module_case("nn.Unfold", "k2x3_d2_p1_s1x2", "nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))",
                      [rand(1, 8, 12, 12)])
    yield module_case("nn.Fold", "k3_p1_d2_o7x9", "nn.Fold((7, 9), 3, padding=1, dilation=2)", [rand(1, 18, 35)])
