"""nn.*: the `shape` family (emit/*/families/shape.py): Flatten, Unflatten."""
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
