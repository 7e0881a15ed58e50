"""nn.*: the `fold` family (emit/*/families/fold.py): Dropout, Fold, Unfold."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


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


_DROPOUT_WHY = "eval mode makes it the identity; its random mask only exists in training"


@family("nn.Dropout", "nn.Unfold", "nn.Fold")
def ncnn_forms():
    """Forms the hand-written ncnn export tests held: a dropout removed between real ops in a
    batch-1 graph, im2col/col2im with every geometry argument at once."""
    yield module_case("nn.Dropout", "p0.5_then_relu_b1", "nn.Dropout(0.5)", [rand(1, 6, 7)],
                      reasons={"training-only": _DROPOUT_WHY}, call="F.relu(self.m(x0))")
    yield module_case("nn.Unfold", "k2x3_d2_p1_s1x2", "nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))",
                      [rand(1, 8, 12, 12)])
    yield module_case("nn.Fold", "k3_p1_d2_o7x9", "nn.Fold((7, 9), 3, padding=1, dilation=2)", [rand(1, 18, 35)])
