"""Shapes that follow the input: each case is converted at two input shapes (`inputshape2`,
`Case.inputs2`) and checked at both, so a size frozen at the first shape fails at the second.
The forms are those ncnn's users write (sizes read with x.size(d), reshape_as, flatten of a
dynamic input, a resize to another input's size, broadcasts of lower-rank inputs)."""
from __future__ import annotations

from dataclasses import replace

from ..case import TIER_SMOKE
from ..registry import family
from .F_Tensor_torch_kit import f, table


def _second(cases, shapes2: dict[str, list]):
    """Each case with its second shape (rows named in `shapes2`), tagged dynamic (full tier: the
    smoke tier's budget is pinned)."""
    for c in cases:
        yield replace(c, inputs2=tuple(shapes2[c.variant]), tags=(c.tags - {TIER_SMOKE}) | {"dynamic"})


def _rows(op: str, rows: list[tuple]):
    """(variant, body, inputs, inputs at the second shape) rows."""
    cases = table(op, [r[:3] for r in rows])
    return list(_second(cases, {r[0]: r[3] for r in rows}))


@family("Tensor.reshape")
def _reshape():
    return _rows("Tensor.reshape", [
        ("dyn_floordiv_sizes", "torch.relu(x0.reshape(x0.size(0) // 128, x1.size(1), -1))",
         [f(256, 5), f(1, 2, 3)], [f(512, 5), f(1, 4, 3)]),
        ("dyn_mul_floordiv", "torch.relu(x0.reshape(x0.size(0), -1, x0.size(3) * 3, x0.size(2) // 3))",
         [f(2, 4, 6, 10)], [f(3, 4, 9, 12)]),
        ("dyn_keep_batch_pool", "F.max_pool1d(x0.reshape(x0.size(0), x0.size(1), -1), 1)",
         [f(2, 3, 4, 5)], [f(4, 3, 6, 7)]),
        ("dyn_batch_reused", "F.max_pool1d(F.max_pool2d(x0, 1).reshape(x0.size(0), x0.size(0), -1), 1)",
         [f(2, 4, 5, 7)], [f(4, 4, 5, 7)]),
    ])


@family("Tensor.reshape_as")
def _reshape_as():
    return _rows("Tensor.reshape_as", [
        ("dyn_r3", "x0.reshape_as(x1) + 1", [f(1, 3, 16), f(1, 6, 8)], [f(1, 3, 32), f(1, 6, 16)]),
        ("dyn_batch_pool", "F.max_pool1d(x0.reshape_as(x1), 1)", [f(2, 3, 4, 5), f(2, 3, 20)],
         [f(4, 3, 6, 7), f(4, 3, 42)]),
    ])


@family("torch.flatten")
def _flatten():
    return _rows("torch.flatten", [
        ("dyn_from1", "torch.flatten(x0, 1) * 2", [f(1, 6, 8)], [f(1, 6, 16)]),
        ("dyn_batch_mid", "F.max_pool1d(torch.flatten(x0, 1, 2), 1)", [f(2, 3, 4, 5)], [f(4, 3, 6, 7)]),
    ])


@family("F.interpolate")
def _interpolate():
    return _rows("F.interpolate", [
        ("dyn_size_of_other", "F.interpolate(x0, size=(x1.size(2) * 2, x1.size(3) + 3), mode='bilinear')",
         [f(1, 3, 8, 9), f(1, 3, 4, 5)], [f(1, 3, 8, 9), f(1, 3, 6, 7)]),
        ("dyn_nearest_same_as", "F.interpolate(x0, size=(x1.size(2), x1.size(3)), mode='nearest')",
         [f(1, 3, 5, 6), f(1, 2, 9, 11)], [f(1, 3, 5, 6), f(1, 2, 12, 7)]),
    ])


@family("torch.add")
def _add():
    return _rows("torch.add", [
        ("dyn_lower_ranks", "(torch.add(x0, x1), torch.add(x1, x2), torch.add(x0, x2))",
         [f(2, 3, 4, 5), f(4, 5), f(5)], [f(3, 3, 6, 7), f(6, 7), f(7)]),
    ])


@family("Tensor.slice")
def _slice():
    return _rows("Tensor.slice", [
        ("dyn_end_of_other", "x0[:, :x1.size(1)] * 2", [f(1, 6, 10), f(1, 3, 7)], [f(1, 8, 14), f(1, 5, 7)]),
        ("dyn_bounds_by_sizes", "x0[:, 1:x0.size(2) - 1, 2:] + 1", [f(1, 6, 10)], [f(1, 8, 14)]),
        ("dyn_negative_start", "x0[..., -3:] - 1", [f(2, 6, 10)], [f(3, 8, 14)]),
    ])
