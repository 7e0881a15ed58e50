"""torch.*: the `repeat` family (emit/*/families/repeat.py): meshgrid, repeat_interleave, tile."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("torch.meshgrid")
def _meshgrid():
    return table("torch.meshgrid", [
        ("ij", "torch.stack(torch.meshgrid(x0, x1, indexing='ij'), 0)", [f(5), f(7)]),
        ("xy_three", "sum(torch.meshgrid(x0, x1, x2, indexing='xy'))", [f(3), f(4), f(2)]),
        ("one", "torch.meshgrid(x0, indexing='ij')[0] * 2", [f(6)]),
        ("ij_four", "sum(torch.meshgrid(x0, x1, x2, x3, indexing='ij'))", [f(2), f(3), f(2), f(4)]),
        # YOLO's anchors: grids of aranges over a feature map's size, added to it
        ("anchor_grid", "x0 + torch.stack(torch.meshgrid(torch.arange(x0.shape[-2]) + 0.5, "
                        "torch.arange(x0.shape[-1]) + 0.5, indexing='ij'), 0)", [f(1, 2, 6, 8)]),
    ])


@family("torch.tile")
def _tile():
    return table("torch.tile", [
        ("r4_hw", "torch.tile(x0, (1, 1, 2, 3))", [f(1, 3, 4, 4)]),
        ("fewer_dims", "torch.tile(x0, (2,))", [f(3, 4)]),
        ("more_dims", "torch.tile(x0, (2, 1, 1))", [f(4, 5)]),
        ("r1", "torch.tile(x0, [3])", [f(13)]),
        ("int", "torch.tile(x0, (2, 2))", [i(3, 4)]),
    ])


@family("torch.repeat_interleave")
def _repeat_interleave():
    return table("torch.repeat_interleave", [
        ("r2_d1", "torch.repeat_interleave(x0, 2, dim=1)", [f(2, 13)]),
        ("flat", "torch.repeat_interleave(x0, 3)", [f(2, 3)]),
        ("d0", "torch.repeat_interleave(x0, 2, 0)", [f(1, 3, 4, 4)]),
        ("tensor_repeats", "torch.repeat_interleave(x0, self.r, dim=0)", [f(3, 4)],
         {"init": "self.register_buffer('r', torch.tensor([1, 2, 3]))"}),
        ("gqa_heads", "torch.repeat_interleave(x0, 2, dim=1)", [f(1, 2, 5, 8)]),
        ("int", "torch.repeat_interleave(x0, 2, dim=-1)", [i(3, 4)]),
    ])
