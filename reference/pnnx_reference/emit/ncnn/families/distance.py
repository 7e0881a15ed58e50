"""Vector similarity and distance, built from BinaryOp, UnaryOp and Reduction:
pairwise_distance (||x1 - x2 + eps||_p), cosine_similarity."""
from __future__ import annotations

import math

from .... import expression as ex
from ....errors import Unsupported
from ..arithmetic import argument_nodes, binary, lower_expression, power, root, scalar, unary
from ..context import Context, param
from ..reduction import REDUCE_L1, REDUCE_L2, REDUCE_MAX, REDUCE_SUM, reduction
from ..registry import LOWERINGS


def _tensor_inputs(op, names: tuple[str, ...]) -> list:
    nodes = argument_nodes(op, names).values()
    if not all(isinstance(node, ex.Input) for node in nodes):
        raise Unsupported(f"{op.type} arguments {', '.join(names)} must be tensors")
    return [op.inputs[node.index] for node in nodes]


def _vector_norm(ctx: Context, src: str, p: float, axis: int, rank: int, keep: bool, out: str) -> None:
    """||src||_p along one ncnn axis."""
    if p in (1, 2):
        reduction(ctx, REDUCE_L1 if p == 1 else REDUCE_L2, src, [axis], rank, keep, out)
        return
    if not p > 0:
        raise Unsupported(f"p={p} norm is not lowered (only p > 0 or inf)")
    magnitude = unary(ctx, "abs", src, ctx.temp(out))
    if p == math.inf:
        reduction(ctx, REDUCE_MAX, magnitude, [axis], rank, keep, out)
        return
    total = reduction(ctx, REDUCE_SUM, power(ctx, magnitude, p, out), [axis], rank, keep, ctx.temp(out))
    root(ctx, total, p, out)


@LOWERINGS.register("F.pairwise_distance", "nn.PairwiseDistance", batchless=True)
def pairwise_distance(ctx: Context, op) -> None:
    """torch: ||x1 - x2 + eps||_p over the last dim."""
    out = op.outputs[0].name
    difference = ctx.temp(out)
    lower_expression(ctx, op, "add(sub(@0,@1),@2)", ("x1", "x2", "eps"), difference)
    rank = max(ctx.rank(operand) for operand in op.inputs[:2])
    _vector_norm(ctx, difference, float(param(op, "p", 2.0)), rank - 1, rank,
                 bool(param(op, "keepdim", False)), out)


@LOWERINGS.register("F.cosine_similarity", "nn.CosineSimilarity", batchless=True)
def cosine_similarity(ctx: Context, op) -> None:
    """torch (2.x): sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim, the norms
    taken over the broadcast inputs."""
    x1, x2 = _tensor_inputs(op, ("x1", "x2"))
    shapes = [ctx.torch_shape(x1), ctx.torch_shape(x2)]
    if len(shapes[0]) != len(shapes[1]) or ctx.rank(x1) != ctx.rank(x2):
        raise Unsupported("cosine_similarity of inputs of different rank is not lowered")
    if min(shapes[0] + shapes[1]) < 1:
        raise Unsupported("cosine_similarity of inputs with a dynamic or empty dim is not lowered")
    dim, eps = int(param(op, "dim", 1)), float(param(op, "eps", 1e-8))
    axis, rank, out = ctx.axis(x1, dim), ctx.rank(x1), op.outputs[0].name
    product = ctx.temp(out)
    lower_expression(ctx, op, "mul(@0,@1)", ("x1", "x2"), product)
    dot = reduction(ctx, REDUCE_SUM, product, [axis], rank, False, ctx.temp(out))
    size = max(shapes[0][dim], shapes[1][dim])
    norms = []
    for operand, shape in zip((x1, x2), shapes):
        # an input broadcast along dim repeats its values: its norm grows by sqrt(size)
        norm = reduction(ctx, REDUCE_L2, ctx.blob(operand), [axis], rank, False, ctx.temp(out),
                          math.sqrt(size / shape[dim]))
        norms.append(scalar(ctx, "max", norm, eps, ctx.temp(out)))
    binary(ctx, "div", dot, binary(ctx, "mul", *norms, ctx.temp(out)), out)
