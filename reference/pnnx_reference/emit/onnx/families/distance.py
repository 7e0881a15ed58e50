"""Vector similarity and distance: cosine_similarity and pairwise_distance as torch computes
them (no ONNX operator), pdist over the upper-triangle pairs."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..builder import static
from ..dtypes import onnx_type
from ..registry import LOWERINGS


@LOWERINGS.register("F.cosine_similarity", "nn.CosineSimilarity")
def cosine_similarity(ctx, op):
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) as torch computes it (no ONNX operator);
    operands broadcast along `dim` first, since that changes their norms."""
    rank = max(ctx.rank(o) for o in op.inputs)
    dim = op.params.get("dim", 1)
    dim = dim + rank if dim < 0 else dim
    axes = ctx.const([dim], hint="axes")
    eps = ctx.const(float(op.params.get("eps", 1e-8)), ctx.dtype(op.inputs[0]), "eps")
    shapes = [[1] * (rank - ctx.rank(o)) + ctx.shape(o) for o in op.inputs]
    size = max(s[dim] for s in shapes)
    units = []
    for operand, shape in zip(op.inputs, shapes):
        x = operand.name
        if shape[dim] != size:
            x = ctx.node("Expand", [x, ctx.const([1] * dim + [size] + [1] * (rank - dim - 1), hint="shape")])
        norm = ctx.node("Max", [ctx.node("ReduceL2", [x, axes], keepdims=1), eps])
        units.append(ctx.node("Div", [x, norm]))
    ctx.node("ReduceSum", [ctx.node("Mul", units), axes], ctx.y(op), keepdims=0)


@LOWERINGS.register("F.pairwise_distance", "nn.PairwiseDistance")
def pairwise_distance(ctx, op):
    """||x1 - x2 + eps||_p over the last dim."""
    p = float(op.params.get("p", op.params.get("norm", 2.0)))
    reduce = {1.0: "ReduceL1", 2.0: "ReduceL2"}.get(p)
    if reduce is None:
        raise Unsupported(f"p={p}")
    eps = ctx.const(float(op.params.get("eps", 1e-6)), ctx.dtype(op.inputs[0]), "eps")
    diff = ctx.node("Add", [ctx.node("Sub", [ctx.x(op, 0), ctx.x(op, 1)]), eps])
    ctx.node(reduce, [diff, ctx.const([-1], hint="axes")], ctx.y(op),
           keepdims=int(bool(op.params.get("keepdim", False))))


# --- F.pdist: distances between the rows of every pair i < j, in torch's order --------------
_NORM_REDUCTIONS = {1.0: "ReduceL1", 2.0: "ReduceL2"}


def _norm_p(ctx, diff: str, p: float, dtype: str) -> str:
    """The p-norm of each row of `diff` over axis 1 (p = 0: the count of nonzeros)."""
    axes = ctx.const([1], hint="axes")
    if p in _NORM_REDUCTIONS:
        return ctx.node(_NORM_REDUCTIONS[p], [diff, axes], keepdims=0)
    if math.isinf(p):
        return ctx.node("ReduceMax", [ctx.node("Abs", [diff]), axes], keepdims=0)
    if p == 0:
        differs = ctx.node("Not", [ctx.node("Equal", [diff, ctx.const(0, dtype, "zero")])])
        nonzero = ctx.node("Cast", [differs], to=onnx_type(dtype))
        return ctx.node("ReduceSum", [nonzero, axes], keepdims=0)
    powered = ctx.node("Pow", [ctx.node("Abs", [diff]), ctx.const(p, dtype, "p")])
    total = ctx.node("ReduceSum", [powered, axes], keepdims=0)
    return ctx.node("Pow", [total, ctx.const(1.0 / p, dtype, "inv_p")])


@LOWERINGS.register("F.pdist", "torch.pdist")
def pdist(ctx, op):
    shape = static(ctx.shape(op.inputs[0]), "input shape")
    dtype = ctx.dtype(op.inputs[0])
    if len(shape) != 2 or shape[0] < 2 or not ctx.is_float(op.inputs[0]):
        raise Unsupported("needs a float (N, M) input with N >= 2")
    p = float(op.params.get("p", 2.0))
    if p < 0:
        raise Unsupported(f"p={p} must be non-negative")
    first, second = np.triu_indices(shape[0], k=1)
    rows_a = ctx.node("Gather", [ctx.x(op), ctx.const(first.astype(np.int64), hint="rows")], axis=0)
    rows_b = ctx.node("Gather", [ctx.x(op), ctx.const(second.astype(np.int64), hint="rows")], axis=0)
    ctx.node("Identity", [_norm_p(ctx, ctx.node("Sub", [rows_a, rows_b]), p, dtype)], ctx.y(op))
