"""Tensor.*: the `matmul` family (emit/*/families/matmul.py): matmul."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


family("Tensor.matmul")(lambda: table("Tensor.matmul", [
    ("r2_r2", "x0.matmul(x1)", [f(4, 13), f(13, 8)]),
    ("r3_batched", "x0.matmul(x1)", [f(2, 5, 16), f(2, 16, 3)]),
    ("r4_bcast", "x0.matmul(x1)", [f(2, 3, 4, 8), f(1, 3, 8, 5)]),
    ("r3_r2", "x0.matmul(x1)", [f(2, 6, 12), f(12, 4)]),
    ("r1_r2", "x0.matmul(x1)", [f(8), f(8, 3)]),
    ("r2_r1", "x0.matmul(x1)", [f(5, 8), f(8)]),
    ("noncontig", "x0.matmul(x1.transpose(-1, -2))", [f(2, 4, 8), f(2, 6, 8)]),
], tol=(1e-5, 1e-5, "dot-product accumulation order differs between runtimes")))
