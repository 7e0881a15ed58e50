"""nn.Embedding / F.embedding -> Gather; nn.EmbeddingBag / F.embedding_bag -> Gather, then one
reduction per bag."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import constant_attribute
from ..dtypes import onnx_type
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Embedding")
def embedding_module(b, op):
    if op.params.get("max_norm") is not None:
        raise Unsupported("max_norm renormalises weights at run time")
    b.node("Gather", [b.attr_weight(op, "weight"), b.x(op)], b.y(op), axis=0)


@LOWERINGS.register("F.embedding")
def embedding_function(b, op):
    weight = op.input("weight", 1)
    if weight is None or op.params.get("max_norm") is not None:
        raise Unsupported("needs a weight input and max_norm=None")
    b.node("Gather", [weight.name, b.x(op)], b.y(op), axis=0)


# --- nn.EmbeddingBag / F.embedding_bag: Gather, then one reduction per bag -------------------
_BAG_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}


def _bag_reduce(b, mode: str, rows: str, mask: str | None, axis: int, keepdims: int) -> str:
    """Reduce gathered rows over `axis`; `mask` (1 keeps a row, 0 drops it, padding_idx)
    excludes rows from sum and mean, an all-padding bag giving zeros as torch does."""
    axes = b.const([axis], hint="axes")
    if mask is None:
        return b.node(_BAG_REDUCE[mode], [rows, axes], keepdims=keepdims)
    total = b.node("ReduceSum", [b.node("Mul", [rows, mask]), axes], keepdims=keepdims)
    if mode == "sum":
        return total
    count = b.node("ReduceSum", [mask, axes], keepdims=keepdims)
    one = b.node("CastLike", [b.const(1.0, "f32", "one"), count])
    return b.node("Div", [total, b.node("Max", [count, one])])


def _bag_bounds(b, op, offsets, n: int) -> list[tuple[int, int]]:
    """(start, end) of each bag from constant offsets over n indices."""
    starts = [int(s) for s in constant_attribute(offsets, "offsets").to_numpy().reshape(-1)]
    ends = starts[1:] + [n]
    if op.params.get("include_last_offset"):
        starts, ends = starts[:-1], starts[1:]
    if any(not 0 <= s <= e <= n for s, e in zip(starts, ends)):
        raise Unsupported("offsets out of order or out of range")
    return list(zip(starts, ends))


def _rows(b, x: str | None, start: int, end: int) -> str | None:
    if x is None:
        return None
    return b.node("Slice", [x, b.const([start]), b.const([end]), b.const([0])])


def _bags_1d(b, op, rows: str, mask, bounds, mode: str, dim: int, dtype: str) -> str:
    """One Slice + reduction per bag; an empty bag is zeros, as in torch."""
    parts = []
    for start, end in bounds:
        if start == end:
            parts.append(b.const(np.zeros((1, dim)), dtype, "zeros"))
        else:
            parts.append(_bag_reduce(b, mode, _rows(b, rows, start, end),
                                     _rows(b, mask, start, end), 0, 1))
    return parts[0] if len(parts) == 1 else b.node("Concat", parts, axis=0)


def _embedding_bag(b, op, table: str, indices, offsets, weights, dim: int) -> None:
    p = op.params
    mode = p.get("mode", "mean")
    if mode not in _BAG_REDUCE or p.get("max_norm") is not None:
        raise Unsupported(f"mode {mode!r} or max_norm")
    padding = p.get("padding_idx")
    if weights is not None and mode != "sum":
        raise Unsupported("per_sample_weights needs mode='sum'")
    if padding is not None and (mode == "max" or int(padding) < 0):
        raise Unsupported("padding_idx with mode='max' or negative padding_idx")
    dtype = b.dtype(op.outputs[0])
    rows = b.node("Gather", [table, indices.name], axis=0)
    mask = None
    last = b.const([-1], hint="axes")
    if padding is not None:
        pad = b.const(int(padding), b.dtype(indices), "padding_idx")
        keep = b.node("Not", [b.node("Equal", [indices.name, pad])])
        mask = b.node("Unsqueeze", [b.node("Cast", [keep], to=onnx_type(dtype)), last])
    if weights is not None:
        rows = b.node("Mul", [rows, b.node("Unsqueeze", [weights.name, last])])
    if b.rank(indices) == 2:
        if offsets is not None:
            raise Unsupported("offsets with 2-D input")
        out = _bag_reduce(b, mode, rows, mask, 1, 0)
    elif b.rank(indices) == 1 and offsets is not None:
        n = b.shape(indices)[0]
        if n < 0:
            raise Unsupported("1-D input of unknown length")
        out = _bags_1d(b, op, rows, mask, _bag_bounds(b, op, offsets, n), mode, dim, dtype)
    else:
        raise Unsupported("needs 2-D input or 1-D input with offsets")
    b.node("Identity", [out], b.y(op))


@LOWERINGS.register("nn.EmbeddingBag")
def embedding_bag_module(b, op):
    weight = b.attr(op, "weight")
    offsets = op.input("offsets", 1)
    weights = op.input("per_sample_weights", 2)
    _embedding_bag(b, op, b.attr_weight(op, "weight"), op.inputs[0], offsets, weights,
                   weight.shape[1])


@LOWERINGS.register("F.embedding_bag")
def embedding_bag_function(b, op):
    table = op.input("weight", 1)
    if table is None or table.shape is None:
        raise Unsupported("embedding table of unknown shape")
    _embedding_bag(b, op, table.name, op.inputs[0], op.input("offsets", 2),
                   op.input("per_sample_weights", None), table.shape[1])
