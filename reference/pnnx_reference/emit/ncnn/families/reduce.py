"""Reductions -> Reduction (axes in batch-dropped torch order, 5=1 as upstream writes): sum,
mean, prod, amax/amin, max/min (their elementwise two-tensor form too), logsumexp, norms;
any/all of 0/1 blobs; sums of bools (counts, exact up to 2^24: truth.check_count) and of
integers (float values, exact below 2^24); var/std (two-pass: mean, then the sum of squared deviations);
argmax/argmin from exact steps (ncnn's ArgMax is not built by default)."""
from __future__ import annotations

import math

import numpy as np

from ....errors import AlongBatch, Unsupported
from ..arithmetic import ABS, MUL, RSUB, SUB, binary, lower_binary_function, unary
from ..context import Context, dims_params, param
from ..layers import Weight
from ..reduction import (REDUCE_L1, REDUCE_L2, REDUCE_LOGSUMEXP, REDUCE_MAX, REDUCE_MEAN, REDUCE_MIN, REDUCE_PROD,
                         REDUCE_SUM, REDUCE_SUMSQ, reduced_axes, reduction)
from ..registry import LEADING, LOWERINGS
from ..truth import above_zero, check_count, is_bool

OPS = {"torch.sum": REDUCE_SUM, "Tensor.sum": REDUCE_SUM, "torch.mean": REDUCE_MEAN, "Tensor.mean": REDUCE_MEAN,
       "torch.amax": REDUCE_MAX, "torch.amin": REDUCE_MIN, "torch.max": REDUCE_MAX, "Tensor.max": REDUCE_MAX,
       "torch.min": REDUCE_MIN, "Tensor.min": REDUCE_MIN, "torch.prod": REDUCE_PROD, "Tensor.prod": REDUCE_PROD,
       "torch.logsumexp": REDUCE_LOGSUMEXP}
NORM = {1: REDUCE_L1, 2: REDUCE_L2}


def _reduce(ctx: Context, op, operation: int) -> None:
    if op.input("other") is not None or len(op.inputs) > 1:
        # max(input, other) / min(input, other) is elementwise
        lower_binary_function(ctx, op, "maximum" if operation == REDUCE_MAX else "minimum")
        return
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise Unsupported("the indices of max/min are used: ncnn Reduction has none")
    dims = param(op, "dim")
    src, out = op.inputs[0], op.outputs[0]
    keep = bool(param(op, "keepdim", False))
    if is_bool(src) and operation == REDUCE_SUM:
        check_count(_terms(src.shape, dims))
    if dims is None or dims == []:
        if ctx.has_batch(src) and (keep or src.shape[ctx.batch_axis(src)] != 1):
            raise AlongBatch("reduces every dim (the batch axis too)")
        # reduce_all: a 1-element blob (0-d result), or every dim kept as 1
        ctx.emit("Reduction", "reduce", [ctx.blob(src)], [out.name], {0: operation, 1: 1, 4: int(keep), 5: 1})
        return
    dims = [dims] if isinstance(dims, int) else list(dims)
    axes = sorted(ctx.axis(src, int(d)) for d in dims)
    params = {0: operation, 1: 0, 3: axes, 4: int(keep), 5: 1}
    if not keep and len(axes) == ctx.rank(src):
        params = {0: operation, 1: 1, 4: 0, 5: 1}
    ctx.emit("Reduction", "reduce", [ctx.blob(src)], [out.name], params)


def _terms(shape: list[int], dims) -> int:
    """How many elements each output element of a reduction over `dims` (None: all) sums."""
    if dims is None or dims == []:
        return int(np.prod(shape, dtype=np.int64))
    dims = [dims] if isinstance(dims, int) else dims
    return int(np.prod([shape[int(d)] for d in dims], dtype=np.int64))


# exact on the bool and integer values blobs carry (sums and products within the limits above)
EXACT_ON_INTEGERS = (REDUCE_SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN)


def _register(op_type: str, operation: int) -> None:
    exact = {"bool_operands": True, "int_operands": True} if operation in EXACT_ON_INTEGERS else {}
    LOWERINGS.register(op_type, batch=LEADING, **exact)(lambda ctx, op: _reduce(ctx, op, operation))


for _type, _operation in OPS.items():
    _register(_type, _operation)


@LOWERINGS.register("torch.norm", "Tensor.norm", "torch.linalg.vector_norm", batch=LEADING)
def norm(ctx: Context, op) -> None:
    p = param(op, "p", param(op, "ord", 2))
    p = 2 if p == "fro" else p
    if p not in NORM:
        raise Unsupported(f"p={p} norm has no ncnn Reduction")
    _reduce(ctx, op, NORM[int(p)])


def _reduce_truth(operation: int):
    """all (min) / any (max) over dims: of the 0/1 operand, or the mask of the reduced |x|."""
    def lower(ctx: Context, op) -> None:
        src, out = op.inputs[0], op.outputs[0].name
        axes, _ = reduced_axes(ctx, src, param(op, "dim"))
        keep, rank, x = bool(param(op, "keepdim", False)), ctx.rank(src), ctx.blob(src)
        if is_bool(src):
            reduction(ctx, operation, x, axes, rank, keep, out)
            return
        magnitude = unary(ctx, "abs", x, ctx.temp(out))
        above_zero(ctx, reduction(ctx, operation, magnitude, axes, rank, keep, ctx.temp(out)), out)
    return lower


LOWERINGS.register("torch.all", "Tensor.all", bool_operands=True, int_operands=True,
                   batch=LEADING)(_reduce_truth(REDUCE_MIN))
LOWERINGS.register("torch.any", "Tensor.any", bool_operands=True, int_operands=True,
                   batch=LEADING)(_reduce_truth(REDUCE_MAX))


def _correction(op) -> float:
    correction = param(op, "correction")
    if correction is not None:
        return float(correction)
    return 1.0 if param(op, "unbiased", True) else 0.0


def _moments(ctx: Context, op, root: bool) -> None:
    """mean over dims (kept), then sum((x - mean)^2) / (n - correction), sqrt for std; a second
    output is the mean."""
    src = op.inputs[0]
    axes, count = reduced_axes(ctx, src, param(op, "dim"))
    correction = _correction(op)
    if count - correction <= 0:
        raise Unsupported(f"variance of {count} elements with correction {correction} divides by <= 0")
    keep, rank = bool(param(op, "keepdim", False)), ctx.rank(src)
    outs = op.outputs
    mean_out = outs[1].name if keep and len(outs) > 1 else ctx.temp(outs[0].name)
    mean = reduction(ctx, REDUCE_MEAN, ctx.blob(src), axes, rank, True, mean_out)
    centered = binary(ctx, "sub", ctx.blob(src), mean, ctx.temp(outs[0].name))
    var_out = ctx.temp(outs[0].name) if root else outs[0].name
    reduction(ctx, REDUCE_SUMSQ, centered, axes, rank, keep, var_out, 1.0 / (count - correction))
    if root:
        unary(ctx, "sqrt", var_out, outs[0].name)
    if len(outs) > 1 and not keep:
        ctx.emit("Reshape", "reshape", [mean], [outs[1].name], dims_params(ctx.shape(outs[1]) or [1]))


@LOWERINGS.register("torch.var", "Tensor.var", "torch.var_mean", batch=LEADING)
def var(ctx: Context, op) -> None:
    _moments(ctx, op, root=False)


@LOWERINGS.register("torch.std", "Tensor.std", "torch.std_mean", batch=LEADING)
def std(ctx: Context, op) -> None:
    _moments(ctx, op, root=True)


# layer featmask (param 31) keeping an index computation in fp32 on the CPU: no fp16 arithmetic (1),
# no fp16 storage (2), no bf16 storage (4), no vulkan (16); fp16 counts exactly only up to 2048
FP32_ONLY = 1 | 2 | 4 | 16


def _arg_extreme(ctx: Context, op, operation: int) -> None:
    """Index of the first max (min) along dim, or of the flattened tensor. Built from exact steps,
    since ncnn's ArgMax layer is not built by default (nor in the ncnn installed here) and
    reports the last of equal maxima: hit = 1 where x is the extreme; score = hit * (n - i)
    along the axis, highest at the first hit; index = n - max(score).
    A nan in x is not reported as the extreme (torch reports it)."""
    src, out = op.inputs[0], op.outputs[0]
    dim, blob, shape = param(op, "dim"), ctx.blob(src), ctx.shape(src)
    if dim is None:
        shape = [math.prod(shape)]
        blob = ctx.reshaped(blob, shape, out.name) if ctx.rank(src) > 1 else blob
    axis = 0 if dim is None else ctx.axis(src, int(dim))
    n = shape[axis]
    if n > 1 << 24:
        raise Unsupported(f"{op.type} over {n} > 2^24 elements: the index is not exact as a float")
    hit = _hits(ctx, blob, shape, axis, operation, out.name)
    positions, score, top = (ctx.temp(out.name) for _ in range(3))
    ramp_shape = [n if i == axis else 1 for i in range(len(shape))]
    ctx.emit("MemoryData", "arg_positions", [], [positions], {**dims_params(ramp_shape), 31: FP32_ONLY},
             [Weight(np.arange(n, 0, -1, dtype=np.float32), tagged=False)])
    ctx.emit("BinaryOp", "arg_score", [hit, positions], [score], {0: MUL, 31: FP32_ONLY})
    keepdim = bool(param(op, "keepdim", False)) and dim is not None
    ctx.emit("Reduction", "arg_top", [score], [top],
             {**_reduce_params(REDUCE_MAX, shape, axis, keep=keepdim), 31: FP32_ONLY})
    ctx.emit("BinaryOp", "arg_index", [top], [out.name], {0: RSUB, 1: 1, 2: float(n), 31: FP32_ONLY})


def _hits(ctx: Context, blob: str, shape: list[int], axis: int, operation: int, base: str) -> str:
    """1 exactly where x equals its extreme along the axis, else 0: 1 - Threshold(|x - best|)."""
    best, diff, size, miss, hit = (ctx.temp(base) for _ in range(5))
    ctx.emit("Reduction", "arg_best", [blob], [best], _reduce_params(operation, shape, axis, keep=True))
    ctx.emit("BinaryOp", "arg_diff", [blob, best], [diff], {0: SUB})
    ctx.emit("UnaryOp", "arg_abs", [diff], [size], {0: ABS})
    ctx.emit("Threshold", "arg_miss", [size], [miss], {0: 0.0})
    ctx.emit("BinaryOp", "arg_hit", [miss], [hit], {0: RSUB, 1: 1, 2: 1.0})
    return hit


def _reduce_params(operation: int, shape: list[int], axis: int, keep: bool) -> dict:
    if len(shape) == 1:
        return {0: operation, 1: 1, 4: int(keep), 5: 1}
    return {0: operation, 1: 0, 3: [axis], 4: int(keep), 5: 1}


@LOWERINGS.register("torch.argmax", "Tensor.argmax", batch=LEADING, int_operands=True)
def argmax(ctx: Context, op) -> None:
    _arg_extreme(ctx, op, REDUCE_MAX)


@LOWERINGS.register("torch.argmin", "Tensor.argmin", batch=LEADING, int_operands=True)
def argmin(ctx: Context, op) -> None:
    _arg_extreme(ctx, op, REDUCE_MIN)
