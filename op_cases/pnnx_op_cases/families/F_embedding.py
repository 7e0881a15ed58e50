"""F.*: the `embedding` family (emit/*/families/embedding.py): embedding, embedding_bag."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


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
