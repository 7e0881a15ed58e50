"""F.*: the `pad` family (emit/*/families/pad.py): pad."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("F.pad")
def _pad():
    rows = [
        ("constant_r4", "F.pad(x0, (1, 2))", [f(1, 3, 5, 6)]),
        ("constant_value_r4_all", "F.pad(x0, (1, 1, 2, 0, 1, 1), value=0.5)", [f(1, 3, 5, 6)]),
        ("constant_negative", "F.pad(x0, (-1, 2, 0, -2))", [f(1, 4, 6, 6)]),
        ("reflect_r3", "F.pad(x0, (2, 3), mode='reflect')", [f(2, 13, 8)]),
        ("reflect_r4", "F.pad(x0, (1, 2, 2, 1), mode='reflect')", [f(1, 3, 6, 7)]),
        ("replicate_r4", "F.pad(x0, (2, 2, 1, 3), mode='replicate')", [f(1, 16, 4, 5)]),
        ("replicate_r5", "F.pad(x0, (1, 1, 1, 1, 1, 1), mode='replicate')", [f(1, 2, 3, 4, 5)]),
        ("circular_r4", "F.pad(x0, (1, 2, 2, 1), mode='circular')", [f(1, 3, 6, 7)]),
        ("circular_r3", "F.pad(x0, (3, 1), mode='circular')", [f(2, 4, 8)]),
        ("reflect_r5", "F.pad(x0, (1, 1, 2, 1, 1, 0), mode='reflect')", [f(1, 2, 3, 4, 5)]),
        ("constant_r1", "F.pad(x0, (3, 3), value=-1.0)", [f(7)]),
        ("constant_int", "F.pad(x0, (1, 1, 1, 1), value=7)", [f(2, 5, 5, dtype="i64", low=0, high=5)]),
    ]
    return table("F.pad", rows)
