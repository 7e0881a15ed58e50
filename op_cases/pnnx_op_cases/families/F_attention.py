"""F.*: the `attention` family (emit/*/families/attention.py): scaled_dot_product_attention."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, table


_DROPOUT_RANDOM = "zeroes a random subset of elements when training=True"


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
