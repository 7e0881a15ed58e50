"""torch.*: the `concat` family (emit/*/families/concat.py): cat, flatten, flip, split, stack,
transpose, unbind."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import case, f, i, table


@family("torch.cat")
def _cat():
    return table("torch.cat", [
        ("d1_two", "torch.cat((x0, x1), 1)", [f(1, 3, 8, 8), f(1, 13, 8, 8)]),
        ("d0_three", "torch.cat([x0, x1, x2], dim=0)", [f(2, 4), f(1, 4), f(3, 4)]),
        ("dneg1", "torch.cat((x0, x1), dim=-1)", [f(2, 3, 5), f(2, 3, 16)]),
        ("r1", "torch.cat((x0, x1))", [f(7), f(12)]),
        ("self_twice", "torch.cat((x0, x0), 1)", [f(2, 4, 3)]),
        ("int", "torch.cat((x0, x1), 1)", [i(2, 3), i(2, 5)]),
        ("noncontig", "torch.cat((x0.transpose(1, 2), x1), 1)", [f(2, 3, 4), f(2, 2, 3)]),
    ])


@family("torch.stack")
def _stack():
    return table("torch.stack", [
        ("d0_two", "torch.stack((x0, x1))", [f(3, 8), f(3, 8)]),
        ("d1_three", "torch.stack([x0, x1, x2], dim=1)", [f(2, 13), f(2, 13), f(2, 13)]),
        ("dneg1", "torch.stack((x0, x1), dim=-1)", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("r1", "torch.stack((x0, x1), 0)", [f(16), f(16)]),
        ("int", "torch.stack((x0, x1), 2)", [i(2, 3), i(2, 3)]),
    ])


@family("torch.transpose", "torch.cat", "torch.stack", "torch.split", "torch.unbind", "torch.flatten", "torch.flip")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("torch.transpose", "r3_12_b1", "torch.transpose(x0, 1, 2)", [f(1, 5, 9)])
    yield case("torch.cat", "d2_r4_b1", "torch.cat((x0, x1), dim=2)", [f(1, 3, 4, 5), f(1, 3, 2, 5)])
    yield case("torch.cat", "dneg1_b1", "torch.cat((x0, x1), dim=-1)", [f(1, 3, 4), f(1, 3, 2)])
    yield case("torch.stack", "d1_r3_b1", "torch.stack((x0, x1), dim=1)", [f(1, 3, 4), f(1, 3, 4)])
    yield case("torch.split", "sizes_dneg1_b1", "torch.split(x0, [2, 3, 1], dim=-1)", [f(1, 4, 6)])
    yield case("torch.unbind", "d1_r4_b1", "torch.unbind(x0, dim=1)", [f(1, 3, 4, 5)])
    yield case("torch.flatten", "start2_b1", "torch.flatten(x0, 2)", [f(1, 8, 12, 12)])
    yield case("torch.flip", "d13_r4_b1", "torch.flip(x0, dims=(1, 3))", [f(1, 3, 4, 5)])
