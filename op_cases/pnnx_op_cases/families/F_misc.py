"""F.* lookups, distances, attention and dropouts."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table

_EVAL_IDENTITY = "identity unless training=True"
_DROPOUT_RANDOM = "zeroes a random subset of elements when training=True"


@family("F.embedding")
def _embedding():
    w = {"params": {"w": (10, 16)}}
    return table("F.embedding", [
        ("r2_idx", "F.embedding(x0, self.w)", [i(2, 5)], w),
        ("r1_idx_i32", "F.embedding(x0, self.w)", [i(7, dtype="i32")], w),
        ("r3_idx_dim13", "F.embedding(x0, self.w)", [i(2, 3, 4, high=20)], {"params": {"w": (20, 13)}}),
        ("padding_idx", "F.embedding(x0, self.w, padding_idx=0)", [i(3, 6)], w),
        ("max_norm", "F.embedding(x0, self.w, max_norm=1.0)", [i(4, 4)], w),
        ("weight_input", "F.embedding(x0, x1)", [i(2, 6, high=8), f(8, 4)]),
    ])


@family("F.embedding_bag")
def _embedding_bag():
    w = {"params": {"w": (10, 8)}}
    return table("F.embedding_bag", [
        ("r2_mean", "F.embedding_bag(x0, self.w)", [i(3, 4)], w),
        ("r2_sum", "F.embedding_bag(x0, self.w, mode='sum')", [i(2, 5)], w),
        ("r2_max", "F.embedding_bag(x0, self.w, mode='max')", [i(4, 3)], w),
        ("r1_offsets", "F.embedding_bag(x0, self.w, self.off, mode='sum')", [i(9)],
         {"params": {"w": (10, 8)}, "init": "self.register_buffer('off', torch.tensor([0, 2, 5]))"}),
        ("per_sample_weights", "F.embedding_bag(x0, self.w, mode='sum', per_sample_weights=x1)",
         [i(3, 4), f(3, 4)], w),
        ("padding_idx", "F.embedding_bag(x0, self.w, mode='mean', padding_idx=1)", [i(3, 5)], w),
    ])


@family("F.one_hot")
def _one_hot():
    return table("F.one_hot", [
        ("r1_n10", "F.one_hot(x0, 10)", [i(6)]),
        ("r2_n4", "F.one_hot(x0, num_classes=4)", [i(3, 5, high=4)]),
        ("r3_n13", "F.one_hot(x0, 13)", [i(2, 3, 4, high=13)]),
        ("as_float", "F.one_hot(x0, 8).float() * 2.0", [i(5, high=8)]),
        ("n1", "F.one_hot(x0, 1)", [i(4, high=1)]),
    ])


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


@family("F.scaled_dot_product_attention")
def _sdpa():
    q3 = [f(2, 6, 8), f(2, 6, 8), f(2, 6, 8)]
    q4 = [f(1, 4, 5, 16), f(1, 4, 7, 16), f(1, 4, 7, 12)]
    return table("F.scaled_dot_product_attention", [
        ("r4_heads", "F.scaled_dot_product_attention(x0, x1, x2)", q4),
        ("r3", "F.scaled_dot_product_attention(x0, x1, x2)", q3),
        ("causal", "F.scaled_dot_product_attention(x0, x1, x2, is_causal=True)",
         [f(1, 2, 6, 8), f(1, 2, 6, 8), f(1, 2, 6, 8)]),
        ("float_mask", "F.scaled_dot_product_attention(x0, x1, x2, attn_mask=x3)", q4 + [f(1, 1, 5, 7)]),
        ("bool_mask", "m = x3 | torch.eye(5, 7, dtype=torch.bool)\n"
         "F.scaled_dot_product_attention(x0, x1, x2, attn_mask=m)", q4 + [b(5, 7)]),
        ("scale", "F.scaled_dot_product_attention(x0, x1, x2, scale=0.5)", q3),
        ("gqa", "F.scaled_dot_product_attention(x0, x1, x2, enable_gqa=True)",
         [f(1, 4, 5, 8), f(1, 2, 6, 8), f(1, 2, 6, 8)]),
        ("dropout_train", "F.scaled_dot_product_attention(x0, x1, x2, dropout_p=0.5)", q3,
         {"reasons": {"random": _DROPOUT_RANDOM}}),
    ], tol=(1e-5, 1e-5, "softmax over dot products; accumulation order differs"))


def _dropout_rows(fn: str, shapes: list[tuple]) -> list[tuple]:
    s0, s1, s2 = shapes
    return [
        ("eval", f"{fn}(x0, p=0.5, training=False)", [f(*s0)], {"reasons": {"training-only": _EVAL_IDENTITY}}),
        ("eval_p0p2_c13", f"{fn}(x0, 0.2, False)", [f(*s1)], {"reasons": {"training-only": _EVAL_IDENTITY}}),
        ("eval_inplace", f"x = x0 * 1.5\n{fn}(x, 0.3, training=False, inplace=True)", [f(*s2)],
         {"reasons": {"training-only": _EVAL_IDENTITY}, "tags": {"inplace"}}),
        ("train_p0", f"{fn}(x0, p=0.0, training=True)", [f(*s0)]),
        ("train", f"{fn}(x0, p=0.5)", [f(*s1)], {"reasons": {"random": _DROPOUT_RANDOM}}),
        ("train_p0p1", f"{fn}(x0, 0.1, True)", [f(*s2)], {"reasons": {"random": _DROPOUT_RANDOM}}),
    ]


_DROPOUTS = {
    "F.dropout": [(1, 3, 8, 8), (2, 13, 6), (16,)],
    "F.alpha_dropout": [(1, 3, 8, 8), (2, 13, 6), (16, 4)],
    "F.dropout2d": [(1, 3, 8, 8), (2, 13, 5, 6), (1, 16, 4, 4)],
    "F.dropout3d": [(1, 3, 2, 4, 4), (2, 13, 2, 3, 3), (1, 4, 3, 3, 3)],
    "F.feature_alpha_dropout": [(1, 3, 8, 8), (2, 13, 5, 6), (1, 16, 2, 3, 3)],
}

@family("F.dropout", "F.alpha_dropout", "F.dropout2d", "F.dropout3d", "F.feature_alpha_dropout")
def dropouts():
    for op, shapes in _DROPOUTS.items():
        yield from table(op, _dropout_rows(op, shapes))
