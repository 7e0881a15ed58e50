"""torch.*: the `linalg` family (emit/*/families/linalg.py): cross, diag, tril, triu."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("torch.cross")
def _cross():
    return table("torch.cross", [
        ("d1", "torch.cross(x0, x1, dim=1)", [f(2, 3, 4), f(2, 3, 4)]),
        ("dneg1", "torch.cross(x0, x1, dim=-1)", [f(5, 3), f(5, 3)]),
        ("r1", "torch.cross(x0, x1, dim=0)", [f(3), f(3)]),
        ("bcast", "torch.cross(x0, x1, dim=-1)", [f(4, 3), f(1, 3)]),
        ("d0_r3", "torch.cross(x0, x1, 0)", [f(3, 2, 2), f(3, 2, 2)]),
    ])


@family("torch.diag")
def _diag():
    return table("torch.diag", [
        ("vec_to_mat", "torch.diag(x0)", [f(5)]),
        ("mat_to_vec", "torch.diag(x0)", [f(4, 4)]),
        ("vec_offset1", "torch.diag(x0, 1)", [f(4)]),
        ("mat_offset_neg", "torch.diag(x0, diagonal=-1)", [f(5, 6)]),
        ("nonsquare", "torch.diag(x0, 2)", [f(3, 7)]),
        ("int", "torch.diag(x0)", [i(6)]),
    ])


def _tri(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("r2", f"{fn}(x0)", [f(5, 5)]),
        ("offset1", f"{fn}(x0, 1)", [f(4, 6)]),
        ("offset_neg", f"{fn}(x0, diagonal=-2)", [f(6, 4)]),
        ("batched", f"{fn}(x0)", [f(2, 3, 4, 4)]),
        ("int", f"{fn}(x0)", [i(4, 4)]),
        ("bool_mask", f"{fn}(x0 > -2)", [f(3, 5)]),
    ])


family("torch.triu")(lambda: _tri("triu"))


family("torch.tril")(lambda: _tri("tril"))
