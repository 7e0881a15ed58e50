"""Pooling geometry shared by the pool family and resize (whose mode="area" is adaptive
average pooling): spatial rank, kernel/stride/pads, adaptive windows -> Global*Pool or a
strided *Pool when they are equal, else one MatMul per spatial axis with a constant averaging
matrix (ONNX has no adaptive pooling)."""
from __future__ import annotations

import re

import numpy as np

from ...errors import Unsupported
from .builder import ints
from .dtypes import numpy_type


def spatial_rank(op_type: str) -> int:
    """The N of a pooling type: nn.MaxPool2d, F.max_pool2d_with_indices, nn.MaxUnpool2d -> 2."""
    return int(re.search(r"pool(\d)d", op_type.lower()).group(1))


def spatial_rank_of(ctx, op) -> int:
    """Spatial rank: from the type (`...Pool2d`), else (F.interpolate) from the input."""
    return spatial_rank(op.type) if op.type[-2].isdigit() else ctx.rank(op.inputs[0]) - 2


def unbatched_rank(op) -> int:
    """torch's rank of an unbatched input to a pooling type: (C, L) for a 1-d pool."""
    return spatial_rank(op.type) + 1


def check_batched(ctx, op, n):
    """An unbatched input arrives as a batch of one (unbatched.py): any other rank is refused."""
    if ctx.rank(op.inputs[0]) != n + 2:
        raise Unsupported(f"input of rank {ctx.rank(op.inputs[0])} (expected {n + 1} or {n + 2})")


def window(op, n):
    kernel = ints(op.params["kernel_size"], n, "kernel_size")
    stride = op.params.get("stride")
    stride = kernel if stride in (None, []) else ints(stride, n, "stride")
    pad = ints(op.params.get("padding", 0), n, "padding")
    return kernel, stride, pad + pad


def adaptive(global_op, window_op, spatial=None):
    def lower(ctx, op):
        n = spatial or spatial_rank(op.type)
        check_batched(ctx, op, n)
        if op.params.get("return_indices") or len(op.outputs) > 1:
            raise Unsupported("return_indices")
        in_sp = ctx.shape(op.inputs[0])[2:]
        out_sp = ctx.shape(op.outputs[0])[2:]
        if all(o == 1 for o in out_sp):
            ctx.node(global_op, [ctx.x(op)], ctx.y(op))
            return
        if any(d < 0 for d in in_sp + out_sp) or any(i % o for i, o in zip(in_sp, out_sp)):
            raise Unsupported("output_size must divide a static input size (or be 1)")
        kernel = [i // o for i, o in zip(in_sp, out_sp)]
        ctx.node(window_op, [ctx.x(op)], ctx.y(op), kernel_shape=kernel, strides=kernel)
    return lower


def adaptive_average(ctx, op):
    """torch's adaptive average pooling (also F.interpolate's mode="area")."""
    try:
        adaptive("GlobalAveragePool", "AveragePool", spatial_rank_of(ctx, op))(ctx, op)
    except Unsupported:
        _adaptive_avg_matmul(ctx, op)


def _averaging_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_in, n_out): column j averages torch's adaptive window j."""
    m = np.zeros((n_in, n_out), np.float32)
    for j in range(n_out):
        start, end = (j * n_in) // n_out, -((-(j + 1) * n_in) // n_out)
        m[start:end, j] = 1.0 / (end - start)
    return m


def _adaptive_avg_matmul(ctx, op):
    """Windows of unequal size: average is linear and separable, so one MatMul per spatial
    axis with a constant averaging matrix (ONNX has no adaptive pooling)."""
    n = spatial_rank_of(ctx, op)
    rank = ctx.rank(op.inputs[0])
    shape, out = ctx.shape(op.inputs[0])[-n:], ctx.shape(op.outputs[0])[-n:]
    if min(shape + out) < 0 or not ctx.is_float(op.inputs[0]):
        raise Unsupported("unequal windows need static spatial sizes and float input")
    dt = ctx.dtype(op.inputs[0])

    def matrix(i, transpose):
        m = _averaging_matrix(shape[i], out[i])
        return ctx.const((m.T if transpose else m).astype(numpy_type(dt)), dt, "avg")

    y = ctx.node("MatMul", [ctx.x(op), matrix(-1, False)], ctx.y(op) if n == 1 else 1)
    if n >= 2:
        y = ctx.node("MatMul", [matrix(-2, True), y], ctx.y(op) if n == 2 else 1)
    if n == 3:  # depth: fold (oH, oW) together so depth is the second-to-last axis
        keep = [0] * (rank - 3)
        flat = ctx.node("Reshape", [y, ctx.const(keep + [shape[0], out[1] * out[2]], hint="shape")])
        pooled = ctx.node("MatMul", [matrix(0, True), flat])
        ctx.node("Reshape", [pooled, ctx.const(keep + out, hint="shape")], ctx.y(op))
