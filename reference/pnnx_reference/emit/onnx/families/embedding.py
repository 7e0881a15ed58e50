"""nn.Embedding / F.embedding -> Gather; nn.EmbeddingBag / F.embedding_bag -> Gather, then one
reduction per bag."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import constant_attribute
from ..dtypes import onnx_type
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Embedding")
def embedding_module(ctx, op):
    if op.params.get("max_norm") is not None:
        raise Unsupported("max_norm renormalises weights at run time")
    ctx.node("Gather", [ctx.attr_weight(op, "weight"), ctx.x(op)], ctx.y(op), axis=0)


@LOWERINGS.register("F.embedding")
def embedding_function(ctx, op):
    weight = op.input("weight", 1)
    if weight is None or op.params.get("max_norm") is not None:
        raise Unsupported("needs a weight input and max_norm=None")
    ctx.node("Gather", [weight.name, ctx.x(op)], ctx.y(op), axis=0)


# --- nn.EmbeddingBag / F.embedding_bag: Gather, then one reduction per bag -------------------
_BAG_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}


def _bag_reduce(ctx, mode: str, rows: str, mask: str | None, axis: int, keepdims: int) -> str:
    """Reduce gathered rows over `axis`; `mask` (1 keeps a row, 0 drops it, padding_idx)
    excludes rows from sum and mean, an all-padding bag giving zeros as torch does."""
    axes = ctx.const([axis], hint="axes")
    if mask is None:
        return ctx.node(_BAG_REDUCE[mode], [rows, axes], keepdims=keepdims)
    total = ctx.node("ReduceSum", [ctx.node("Mul", [rows, mask]), axes], keepdims=keepdims)
    if mode == "sum":
        return total
    count = ctx.node("ReduceSum", [mask, axes], keepdims=keepdims)
    one = ctx.node("CastLike", [ctx.const(1.0, "f32", "one"), count])
    return ctx.node("Div", [total, ctx.node("Max", [count, one])])


def _bag_bounds(ctx, op, offsets, n: int) -> list[tuple[int, int]]:
    """(start, end) of each bag from constant offsets over n indices."""
    starts = [int(s) for s in constant_attribute(offsets, "offsets").to_numpy().reshape(-1)]
    ends = starts[1:] + [n]
    if op.params.get("include_last_offset"):
        starts, ends = starts[:-1], starts[1:]
    if any(not 0 <= s <= e <= n for s, e in zip(starts, ends)):
        raise Unsupported("offsets out of order or out of range")
    return list(zip(starts, ends))


def _rows(ctx, x: str | None, start: int, end: int) -> str | None:
    if x is None:
        return None
    return ctx.node("Slice", [x, ctx.const([start]), ctx.const([end]), ctx.const([0])])


def _bags_1d(ctx, op, rows: str, mask, bounds, mode: str, dim: int, dtype: str) -> str:
    """One Slice + reduction per bag; an empty bag is zeros, as in torch."""
    parts = []
    for start, end in bounds:
        if start == end:
            parts.append(ctx.const(np.zeros((1, dim)), dtype, "zeros"))
        else:
            parts.append(_bag_reduce(ctx, mode, _rows(ctx, rows, start, end),
                                     _rows(ctx, mask, start, end), 0, 1))
    return parts[0] if len(parts) == 1 else ctx.node("Concat", parts, axis=0)


def _embedding_bag(ctx, op, table: str, indices, offsets, weights, dim: int) -> None:
    p = op.params
    mode = p.get("mode", "mean")
    if mode not in _BAG_REDUCE or p.get("max_norm") is not None:
        raise Unsupported(f"mode {mode!r} or max_norm")
    padding = p.get("padding_idx")
    if weights is not None and mode != "sum":
        raise Unsupported("per_sample_weights needs mode='sum'")
    if padding is not None and (mode == "max" or int(padding) < 0):
        raise Unsupported("padding_idx with mode='max' or negative padding_idx")
    dtype = ctx.dtype(op.outputs[0])
    rows = ctx.node("Gather", [table, indices.name], axis=0)
    mask = None
    last = ctx.const([-1], hint="axes")
    if padding is not None:
        pad = ctx.const(int(padding), ctx.dtype(indices), "padding_idx")
        keep = ctx.node("Not", [ctx.node("Equal", [indices.name, pad])])
        mask = ctx.node("Unsqueeze", [ctx.node("Cast", [keep], to=onnx_type(dtype)), last])
    if weights is not None:
        rows = ctx.node("Mul", [rows, ctx.node("Unsqueeze", [weights.name, last])])
    if ctx.rank(indices) == 2:
        if offsets is not None:
            raise Unsupported("offsets with 2-D input")
        out = _bag_reduce(ctx, mode, rows, mask, 1, 0)
    elif ctx.rank(indices) == 1 and offsets is not None:
        n = ctx.shape(indices)[0]
        if n < 0:
            raise Unsupported("1-D input of unknown length")
        out = _bags_1d(ctx, op, rows, mask, _bag_bounds(ctx, op, offsets, n), mode, dim, dtype)
    else:
        raise Unsupported("needs 2-D input or 1-D input with offsets")
    ctx.node("Identity", [out], ctx.y(op))


@LOWERINGS.register("nn.EmbeddingBag")
def embedding_bag_module(ctx, op):
    weight = ctx.attr(op, "weight")
    offsets = op.input("offsets", 1)
    weights = op.input("per_sample_weights", 2)
    _embedding_bag(ctx, op, ctx.attr_weight(op, "weight"), op.inputs[0], offsets, weights,
                   weight.shape[1])


@LOWERINGS.register("F.embedding_bag")
def embedding_bag_function(ctx, op):
    table = op.input("weight", 1)
    if table is None or table.shape is None:
        raise Unsupported("embedding table of unknown shape")
    _embedding_bag(ctx, op, table.name, op.inputs[0], op.input("offsets", 2),
                   op.input("per_sample_weights", None), table.shape[1])
