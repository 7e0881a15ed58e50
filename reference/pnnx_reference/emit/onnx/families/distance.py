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
def cosine_similarity(b, op):
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) as torch computes it (no ONNX operator);
    operands broadcast along `dim` first, since that changes their norms."""
    rank = max(b.rank(o) for o in op.inputs)
    dim = op.params.get("dim", 1)
    dim = dim + rank if dim < 0 else dim
    axes = b.const([dim], hint="axes")
    eps = b.const(float(op.params.get("eps", 1e-8)), b.dtype(op.inputs[0]), "eps")
    shapes = [[1] * (rank - b.rank(o)) + b.shape(o) for o in op.inputs]
    size = max(s[dim] for s in shapes)
    units = []
    for operand, shape in zip(op.inputs, shapes):
        x = operand.name
        if shape[dim] != size:
            x = b.node("Expand", [x, b.const([1] * dim + [size] + [1] * (rank - dim - 1), hint="shape")])
        norm = b.node("Max", [b.node("ReduceL2", [x, axes], keepdims=1), eps])
        units.append(b.node("Div", [x, norm]))
    b.node("ReduceSum", [b.node("Mul", units), axes], b.y(op), keepdims=0)


@LOWERINGS.register("F.pairwise_distance", "nn.PairwiseDistance")
def pairwise_distance(b, op):
    """||x1 - x2 + eps||_p over the last dim."""
    p = float(op.params.get("p", op.params.get("norm", 2.0)))
    reduce = {1.0: "ReduceL1", 2.0: "ReduceL2"}.get(p)
    if reduce is None:
        raise Unsupported(f"p={p}")
    eps = b.const(float(op.params.get("eps", 1e-6)), b.dtype(op.inputs[0]), "eps")
    diff = b.node("Add", [b.node("Sub", [b.x(op, 0), b.x(op, 1)]), eps])
    b.node(reduce, [diff, b.const([-1], hint="axes")], b.y(op),
           keepdims=int(bool(op.params.get("keepdim", False))))


# --- F.pdist: distances between the rows of every pair i < j, in torch's order --------------
_NORM_REDUCTIONS = {1.0: "ReduceL1", 2.0: "ReduceL2"}


def _norm_p(b, diff: str, p: float, dtype: str) -> str:
    """The p-norm of each row of `diff` over axis 1 (p = 0: the count of nonzeros)."""
    axes = b.const([1], hint="axes")
    if p in _NORM_REDUCTIONS:
        return b.node(_NORM_REDUCTIONS[p], [diff, axes], keepdims=0)
    if math.isinf(p):
        return b.node("ReduceMax", [b.node("Abs", [diff]), axes], keepdims=0)
    if p == 0:
        differs = b.node("Not", [b.node("Equal", [diff, b.const(0, dtype, "zero")])])
        nonzero = b.node("Cast", [differs], to=onnx_type(dtype))
        return b.node("ReduceSum", [nonzero, axes], keepdims=0)
    powered = b.node("Pow", [b.node("Abs", [diff]), b.const(p, dtype, "p")])
    total = b.node("ReduceSum", [powered, axes], keepdims=0)
    return b.node("Pow", [total, b.const(1.0 / p, dtype, "inv_p")])


@LOWERINGS.register("F.pdist", "torch.pdist")
def pdist(b, op):
    shape = static(b.shape(op.inputs[0]), "input shape")
    dtype = b.dtype(op.inputs[0])
    if len(shape) != 2 or shape[0] < 2 or not b.is_float(op.inputs[0]):
        raise Unsupported("needs a float (N, M) input with N >= 2")
    p = float(op.params.get("p", 2.0))
    if p < 0:
        raise Unsupported(f"p={p} must be non-negative")
    first, second = np.triu_indices(shape[0], k=1)
    rows_a = b.node("Gather", [b.x(op), b.const(first.astype(np.int64), hint="rows")], axis=0)
    rows_b = b.node("Gather", [b.x(op), b.const(second.astype(np.int64), hint="rows")], axis=0)
    b.node("Identity", [_norm_p(b, b.node("Sub", [rows_a, rows_b]), p, dtype)], b.y(op))
