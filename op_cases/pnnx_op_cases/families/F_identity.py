"""F.*: the `identity` family (emit/*/families/identity.py): alpha_dropout, dropout, dropout2d,
dropout3d, feature_alpha_dropout."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


_EVAL_IDENTITY = "identity unless training=True"


_DROPOUT_RANDOM = "zeroes a random subset of elements when training=True"


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
