"""torch.*: the `matmul` family (emit/*/families/matmul.py): addmm, baddbmm, bmm, einsum, matmul,
mm, mv, outer."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import case, f, i, table


_DOT_TOL = (1e-5, 1e-5, "dot-product accumulation order differs between runtimes")


@family("torch.matmul")
def _matmul():
    return table("torch.matmul", [
        ("r2_r2", "torch.matmul(x0, x1)", [f(4, 13), f(13, 8)]),
        ("r3_batched", "torch.matmul(x0, x1)", [f(2, 5, 16), f(2, 16, 3)]),
        ("r4_bcast", "torch.matmul(x0, x1)", [f(2, 3, 4, 8), f(1, 3, 8, 5)]),
        ("r3_r2_weight", "torch.matmul(x0, self.w)", [f(2, 6, 12)], {"params": {"w": (12, 4)}}),
        ("r1_r2", "torch.matmul(x0, x1)", [f(8), f(8, 3)]),
        ("r2_r1", "torch.matmul(x0, x1)", [f(5, 8), f(8)]),
        ("r1_r1", "torch.matmul(x0, x1)", [f(12), f(12)]),
        ("noncontig", "torch.matmul(x0, x1.transpose(-1, -2))", [f(2, 4, 8), f(2, 6, 8)]),
    ], tol=_DOT_TOL)


@family("torch.mm")
def _mm():
    return table("torch.mm", [
        ("basic", "torch.mm(x0, x1)", [f(4, 13), f(13, 8)]),
        ("weight", "torch.mm(x0, self.w)", [f(3, 16)], {"params": {"w": (16, 12)}}),
        ("vec_like", "torch.mm(x0, x1)", [f(1, 8), f(8, 1)]),
        ("noncontig", "torch.mm(x0.t(), x1)", [f(6, 4), f(6, 5)]),
        ("c3", "torch.mm(x0, x1)", [f(7, 3), f(3, 3)]),
    ], tol=_DOT_TOL)


@family("torch.bmm")
def _bmm():
    return table("torch.bmm", [
        ("basic", "torch.bmm(x0, x1)", [f(2, 4, 13), f(2, 13, 8)]),
        ("b1", "torch.bmm(x0, x1)", [f(1, 5, 16), f(1, 16, 3)]),
        ("attn_scores", "torch.bmm(x0, x1.transpose(1, 2))", [f(3, 6, 8), f(3, 7, 8)]),
        ("b4_small", "torch.bmm(x0, x1)", [f(4, 1, 3), f(4, 3, 1)]),
        ("weight", "torch.bmm(x0, self.w)", [f(2, 3, 4)], {"params": {"w": (2, 4, 12)}}),
    ], tol=_DOT_TOL)


@family("torch.mv")
def _mv():
    return table("torch.mv", [
        ("basic", "torch.mv(x0, x1)", [f(4, 13), f(13)]),
        ("weight", "torch.mv(self.w, x0)", [f(16)], {"params": {"w": (8, 16)}}),
        ("noncontig", "torch.mv(x0.t(), x1)", [f(6, 4), f(6)]),
        ("rows1", "torch.mv(x0, x1)", [f(1, 12), f(12)]),
        ("c3", "torch.mv(x0, x1)", [f(5, 3), f(3)]),
    ], tol=_DOT_TOL)


@family("torch.addmm")
def _addmm():
    return table("torch.addmm", [
        ("basic", "torch.addmm(x0, x1, x2)", [f(4, 8), f(4, 13), f(13, 8)]),
        ("bias_bcast", "torch.addmm(self.b, x0, self.w)", [f(3, 16)], {"params": {"b": (12,), "w": (16, 12)}}),
        ("beta_alpha", "torch.addmm(x0, x1, x2, beta=0.5, alpha=2.0)", [f(4, 5), f(4, 6), f(6, 5)]),
        ("beta0", "torch.addmm(x0, x1, x2, beta=0)", [f(2, 3), f(2, 4), f(4, 3)]),
        ("noncontig", "torch.addmm(x0, x1.t(), x2)", [f(5, 4), f(6, 5), f(6, 4)]),
    ], tol=_DOT_TOL)


@family("torch.baddbmm")
def _baddbmm():
    return table("torch.baddbmm", [
        ("basic", "torch.baddbmm(x0, x1, x2)", [f(2, 4, 8), f(2, 4, 13), f(2, 13, 8)]),
        ("bias_bcast", "torch.baddbmm(x0, x1, x2)", [f(8), f(3, 4, 5), f(3, 5, 8)]),
        ("beta_alpha", "torch.baddbmm(x0, x1, x2, beta=0.5, alpha=2.0)", [f(2, 4, 5), f(2, 4, 6), f(2, 6, 5)]),
        ("beta0_attn", "torch.baddbmm(x0, x1, x2.transpose(1, 2), beta=0, alpha=0.125)",
         [f(2, 6, 7), f(2, 6, 16), f(2, 7, 16)]),
        ("b1", "torch.baddbmm(x0, x1, x2)", [f(1, 3, 3), f(1, 3, 12), f(1, 12, 3)]),
    ], tol=_DOT_TOL)


@family("torch.einsum")
def _einsum():
    return table("torch.einsum", [
        ("matmul", "torch.einsum('ij,jk->ik', x0, x1)", [f(4, 13), f(13, 8)]),
        ("batched_matmul", "torch.einsum('bij,bjk->bik', x0, x1)", [f(2, 4, 6), f(2, 6, 5)]),
        ("attn_scores", "torch.einsum('bhqd,bhkd->bhqk', x0, x1)", [f(1, 2, 5, 8), f(1, 2, 7, 8)]),
        ("transpose", "torch.einsum('ij->ji', x0)", [f(4, 12)]),
        ("trace", "torch.einsum('ii->', x0)", [f(5, 5)]),
        ("diag", "torch.einsum('ii->i', x0)", [f(6, 6)]),
        ("sum_axis", "torch.einsum('bij->bj', x0)", [f(2, 3, 16)]),
        ("outer", "torch.einsum('i,j->ij', x0, x1)", [f(4), f(13)]),
        ("dot", "torch.einsum('i,i->', x0, x1)", [f(12), f(12)]),
        ("hadamard_sum", "torch.einsum('ij,ij->i', x0, x1)", [f(3, 8), f(3, 8)]),
        ("ellipsis", "torch.einsum('...ij,...jk->...ik', x0, x1)", [f(2, 3, 4, 5), f(2, 3, 5, 2)]),
        ("ellipsis_transpose", "torch.einsum('...ij->...ji', x0)", [f(2, 3, 4, 5)]),
        ("ellipsis_implicit", "torch.einsum('i...j,jk', x0, x1)", [f(4, 3, 5), f(5, 2)]),
        ("ellipsis_fewer_dims", "torch.einsum('...ij,...j->...i', x0, x1)", [f(2, 3, 4, 5), f(3, 5)]),
        ("three_operands", "torch.einsum('ij,jk,kl->il', x0, x1, x2)", [f(2, 3), f(3, 4), f(4, 5)]),
        ("list_operands", "torch.einsum('nchw,c->nhw', [x0, x1])", [f(1, 3, 4, 4), f(3)]),
    ], tol=_DOT_TOL)


@family("torch.outer")
def _outer():
    return table("torch.outer", [
        ("basic", "torch.outer(x0, x1)", [f(4), f(13)]),
        ("same", "torch.outer(x0, x0)", [f(8)]),
        ("len1", "torch.outer(x0, x1)", [f(1), f(16)]),
        ("int", "torch.outer(x0, x1)", [i(3), i(5)]),
        ("from_arange_like", "torch.outer(x0, x1 * 2.0)", [f(6), f(3)]),
    ])


@family("torch.matmul", "torch.addmm")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("torch.matmul", "r3_b1", "torch.matmul(x0, x1)", [f(1, 4, 6), f(1, 6, 5)], tol=_DOT_TOL)
    yield case("torch.matmul", "r3_b1_weight", "torch.matmul(x0, self.w)", [f(1, 4, 6)], params={"w": (6, 3)},
               tol=_DOT_TOL)
    yield case("torch.addmm", "bias_bcast_b1", "torch.addmm(self.b, x0, self.w)", [f(1, 6)],
               params={"b": (5,), "w": (6, 5)}, tol=_DOT_TOL)
