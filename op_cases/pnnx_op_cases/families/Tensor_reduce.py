"""Tensor.*: the `reduce` family (emit/*/families/reduce.py): argmax, max, mean, sum."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, case, f, i, reduce, table


MO = {"tags": {"multi-output"}}


family("Tensor.mean")(lambda: reduce("Tensor.mean", "{x}.mean({args})"))


family("Tensor.sum")(lambda: reduce("Tensor.sum", "{x}.sum({args})", extra=[
    ("int", "x0.sum(1)", [i(3, 4)]), ("bool", "x0.sum()", [b(5, 6)]),
    ("dtype_f64", "x0.sum(-1, dtype=torch.float64)", [f(2, 8)])]))


@family("Tensor.max")
def _max():
    return table("Tensor.max", [
        ("all", "x0.max()", [f(1, 3, 8, 8)]),
        ("d1_values_indices", "x0.max(1)", [f(2, 13, 5)], MO),
        ("dneg1_keepdim", "v, idx = x0.max(dim=-1, keepdim=True)\nv, idx", [f(2, 4, 6)], MO),
        ("d0_values", "x0.max(0)[0]", [f(7, 3)]),
        ("other", "x0.max(x1)", [f(3, 4), f(3, 4)]),
        ("int", "x0.max(1)[0]", [i(3, 5)]),
    ])


@family("Tensor.argmax")
def _argmax():
    return table("Tensor.argmax", [
        ("all", "x0.argmax()", [f(1, 3, 8, 8)]),
        ("d1", "x0.argmax(1)", [f(2, 13, 5)]),
        ("dneg1_keepdim", "x0.argmax(dim=-1, keepdim=True)", [f(2, 4, 6)]),
        ("r1", "x0.argmax(0)", [f(16)]),
        ("int", "x0.argmax(1)", [i(3, 5, high=1000)]),
    ])


@family("Tensor.mean")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("Tensor.mean", "d23_b1", "x0.mean(dim=(2, 3))", [f(1, 8, 12, 12)])
