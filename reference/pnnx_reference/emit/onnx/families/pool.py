"""Pooling: MaxPool, AveragePool, Global*Pool, LpPool; adaptive pooling (see pooling.py); max
pooling that returns indices, and its inverse max_unpool; adaptive max pooling with unequal
windows and fractional max pooling.

Max pooling with indices: torch's indices count within each (n, c) plane; ONNX MaxPool's count
over the whole N*C*spatial tensor, so the pooled indices are reduced modulo the plane size.
Unpooling scatters each plane into a zero plane (ScatterElements on the flattened spatial axis),
which keeps torch's per-plane convention without rebuilding global offsets.

Windows ONNX MaxPool cannot express (adaptive max pooling with unequal windows, fractional max
pooling with recorded, constant random samples): max is separable, so both pool one spatial
axis at a time: gather every window's positions onto a new (window, position) pair of axes,
then ReduceMax over the positions. Windows shorter than the longest repeat their last
position, which leaves the maximum unchanged.

With return_indices (torch's index of the maximum within the flattened plane) the axes are not
separable: each output cell's whole window is gathered in row-major order, so that ArgMax's
first maximum is the one torch reports, and the argmax maps back through the window table."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..builder import constant_attribute, ints, static
from ..pooling import adaptive, adaptive_average, check_batched, spatial_rank, unbatched_rank, window
from ..registry import LOWERINGS


@LOWERINGS.register("nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d", "F.max_pool1d", "F.max_pool2d",
                    "F.max_pool3d", unbatched_rank=unbatched_rank)
def max_pool(ctx, op):
    if op.params.get("return_indices") or len(op.outputs) > 1:
        return max_pool_with_indices(ctx, op)
    n = spatial_rank(op.type)
    check_batched(ctx, op, n)
    kernel, stride, pads = window(op, n)
    ctx.node("MaxPool", [ctx.x(op)], ctx.y(op), kernel_shape=kernel, strides=stride, pads=pads,
           dilations=ints(op.params.get("dilation", 1), n, "dilation"),
           ceil_mode=int(bool(op.params.get("ceil_mode", False))))


@LOWERINGS.register("nn.AvgPool1d", "nn.AvgPool2d", "nn.AvgPool3d", "F.avg_pool1d", "F.avg_pool2d",
                    "F.avg_pool3d", unbatched_rank=unbatched_rank)
def avg_pool(ctx, op):
    n = spatial_rank(op.type)
    check_batched(ctx, op, n)
    if op.params.get("divisor_override") is not None:
        raise Unsupported("divisor_override")
    kernel, stride, pads = window(op, n)
    ctx.node("AveragePool", [ctx.x(op)], ctx.y(op), kernel_shape=kernel, strides=stride, pads=pads,
           ceil_mode=int(bool(op.params.get("ceil_mode", False))),
           count_include_pad=int(bool(op.params.get("count_include_pad", True))))


@LOWERINGS.register("nn.LPPool1d", "nn.LPPool2d", "nn.LPPool3d", "F.lp_pool1d", "F.lp_pool2d", "F.lp_pool3d",
                    unbatched_rank=unbatched_rank)
def lp_pool(ctx, op):
    n = spatial_rank(op.type)
    check_batched(ctx, op, n)
    p = float(op.params["norm_type"])
    kernel, stride, _ = window(op, n)
    if op.params.get("ceil_mode") or p != int(p):
        # ONNX LpPool takes an integer p, and sums a partial window (ceil_mode) over its own
        # positions, where torch scales that window's mean by the full kernel size
        _lp_pool_by_average(ctx, op, p, kernel, stride)
        return
    ctx.node("LpPool", [ctx.x(op)], ctx.y(op), kernel_shape=kernel, strides=stride, p=int(p))


def _lp_pool_by_average(ctx, op, p: float, kernel: list, stride: list) -> None:
    """torch's own formula: (sign(m) * relu(|m|) * kernel volume) ** (1 / p), m the mean of
    x ** p over each window (a partial window's mean over its positions in the input)."""
    dtype = ctx.dtype(op.inputs[0])
    powered = ctx.node("Pow", [ctx.x(op), ctx.const(p, dtype, "norm_type")])
    mean = ctx.node("AveragePool", [powered], kernel_shape=kernel, strides=stride, pads=[0] * (2 * len(kernel)),
                  ceil_mode=int(bool(op.params.get("ceil_mode", False))), count_include_pad=1)
    magnitude = ctx.node("Relu", [ctx.node("Abs", [mean])])
    signed = ctx.node("Mul", [ctx.node("Sign", [mean]), magnitude])
    total = ctx.node("Mul", [signed, ctx.const(float(math.prod(kernel)), dtype, "kernel_volume")])
    ctx.node("Pow", [total, ctx.const(1.0 / p, dtype, "inverse_norm_type")], ctx.y(op))


@LOWERINGS.register("nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveAvgPool3d",
                    "F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d",
                    unbatched_rank=unbatched_rank)
def adaptive_avg_pool(ctx, op):
    adaptive_average(ctx, op)


@LOWERINGS.register("nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d",
                    "F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d",
                    unbatched_rank=unbatched_rank)
def adaptive_max(ctx, op):
    try:
        adaptive("GlobalMaxPool", "MaxPool")(ctx, op)
    except Unsupported:  # unequal windows
        adaptive_max_windows(ctx, op)


@LOWERINGS.register("F.max_pool1d_with_indices", "F.max_pool2d_with_indices", "F.max_pool3d_with_indices",
                    unbatched_rank=unbatched_rank)
def max_pool_with_indices(ctx, op):
    n = spatial_rank(op.type)
    check_batched(ctx, op, n)
    kernel, stride, pads = window(op, n)
    plane = math.prod(static(ctx.shape(op.inputs[0])[2:], "spatial sizes"))
    outs = [ctx.y(op)] + ([ctx.y(op, 1)] if len(op.outputs) > 1 else [])
    flat = ctx.fresh(f"{op.name}_flat_indices") if len(outs) > 1 else None
    ctx.node("MaxPool", [ctx.x(op)], outs[:1] + ([flat] if flat else []), kernel_shape=kernel,
           strides=stride, pads=pads, dilations=ints(op.params.get("dilation", 1), n, "dilation"),
           ceil_mode=int(bool(op.params.get("ceil_mode", False))))
    if flat:
        ctx.node("Mod", [flat, ctx.const(plane)], outs[1])


@LOWERINGS.register("F.max_unpool1d", "F.max_unpool2d", "F.max_unpool3d", "nn.MaxUnpool1d", "nn.MaxUnpool2d",
                    "nn.MaxUnpool3d", unbatched_rank=unbatched_rank, batched_inputs=2)
def max_unpool(ctx, op):
    n = spatial_rank(op.type)
    check_batched(ctx, op, n)
    indices = op.input("indices", 1)
    if indices is None:
        raise Unsupported("no indices input")
    lead = static(ctx.shape(op.outputs[0]), "output shape")[:2]
    out_plane = math.prod(ctx.shape(op.outputs[0])[2:])
    flat_shape = ctx.const(lead + [-1], hint="shape")
    values = ctx.node("Reshape", [ctx.x(op), flat_shape])
    where = ctx.node("Reshape", [indices.name, flat_shape])
    zeros = ctx.node("Expand", [ctx.const(0.0, ctx.dtype(op.inputs[0]), "zero"),
                              ctx.const(lead + [out_plane], hint="shape")])
    scattered = ctx.node("ScatterElements", [zeros, where, values], axis=2)
    ctx.node("Reshape", [scattered, ctx.const(ctx.shape(op.outputs[0]), hint="shape")], ctx.y(op))


_MAX_INDEX_ELEMENTS = 1 << 24  # constant index tensors beyond this are not worth emitting


def _padded(windows: list[tuple[int, int]]) -> np.ndarray:
    """(number of windows, longest window) positions; short windows repeat their last one."""
    width = max(end - start for start, end in windows)
    return np.array([[min(start + j, end - 1) for j in range(width)] for start, end in windows],
                    np.int64)


def _adaptive_windows(n_in: int, n_out: int) -> list[tuple[int, int]]:
    """torch's adaptive pooling window i: [floor(i*L/o), ceil((i+1)*L/o))."""
    return [((i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)) for i in range(n_out)]


def _pool_axis(ctx, x: str, axis: int, positions: np.ndarray, out: str | None = None) -> str:
    """Max over windows along `axis`, the same windows for every slice (positions: (o, k))."""
    gathered = ctx.node("Gather", [x, ctx.const(positions, hint="window")], axis=axis)
    return ctx.node("ReduceMax", [gathered, ctx.const([axis + 1], hint="axes")], out or 1,
                  keepdims=0)


def _window_table(positions: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    """(cells, K): flat in-plane positions of each output cell's window, cells and window
    positions both row-major, from per-axis windows positions[d]: (o_d, k_d)."""
    n = len(positions)
    outs, widths = [p.shape[0] for p in positions], [p.shape[1] for p in positions]
    table = np.zeros(outs + widths, np.int64)
    for d, p in enumerate(positions):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = p.shape
        table = table + p.reshape(shape) * int(np.prod(sizes[d + 1:]))
    return table.reshape(int(np.prod(outs)), int(np.prod(widths)))


def _pool_with_indices(ctx, op, table: np.ndarray, n: int) -> None:
    """Values and torch's in-plane indices; table (cells, K), or (N, C, cells, K) per plane."""
    in_shape, out_shape = ctx.shape(op.inputs[0]), ctx.shape(op.outputs[0])
    lead = in_shape[:-n]
    cells, width = table.shape[-2:]
    if int(np.prod(lead)) * cells * width > _MAX_INDEX_ELEMENTS:
        raise Unsupported("too many window positions for constant index tables")
    flat = ctx.node("Reshape", [ctx.x(op), ctx.const(lead + [int(np.prod(in_shape[-n:]))], hint="shape")])
    if table.ndim == 2:
        gathered = ctx.node("Gather", [flat, ctx.const(table, hint="window")], axis=len(lead))
    else:
        picked = ctx.node("GatherElements", [flat, ctx.const(table.reshape(lead + [cells * width]),
                                                         hint="window")], axis=len(lead))
        gathered = ctx.node("Reshape", [picked, ctx.const(lead + [cells, width], hint="shape")])
    out = ctx.const(out_shape, hint="shape")
    values = ctx.node("ReduceMax", [gathered, ctx.const([-1], hint="axes")], keepdims=0)
    ctx.node("Reshape", [values, out], ctx.y(op, 0))
    best = ctx.node("ArgMax", [gathered], axis=-1, keepdims=1, select_last_index=0)
    full = np.ascontiguousarray(np.broadcast_to(table, lead + [cells, width]))
    index = ctx.node("GatherElements", [ctx.const(full, hint="window_index"), best], axis=-1)
    ctx.node("Reshape", [index, out], ctx.y(op, 1))


def _check_index_output(ctx, op) -> None:
    if len(op.outputs) != 2 or ctx.dtype(op.outputs[1]) != "i64":
        raise Unsupported("return_indices needs two outputs, the indices int64")


def adaptive_max_windows(ctx, op) -> None:
    """Adaptive max pooling with any static sizes (batched or not), with or without indices."""
    n = spatial_rank(op.type)
    in_shape, out_shape = ctx.shape(op.inputs[0]), ctx.shape(op.outputs[0])
    if len(in_shape) not in (n + 1, n + 2) or min(in_shape[-n:] + out_shape[-n:]) < 1:
        raise Unsupported("needs static spatial sizes")
    if op.params.get("return_indices") or len(op.outputs) > 1:
        _check_index_output(ctx, op)
        windows = [_padded(_adaptive_windows(i, o)) for i, o in zip(in_shape[-n:], out_shape[-n:])]
        _pool_with_indices(ctx, op, _window_table(windows, in_shape[-n:]), n)
        return
    rank = len(in_shape)
    pooled = [a for a in range(rank - n, rank) if in_shape[a] != out_shape[a]]
    x = ctx.x(op)
    if not pooled:
        ctx.node("Identity", [x], ctx.y(op))
    for a in pooled:
        windows = _padded(_adaptive_windows(in_shape[a], out_shape[a]))
        x = _pool_axis(ctx, x, a, windows, ctx.y(op) if a == pooled[-1] else None)


LOWERINGS.register("F.adaptive_max_pool1d_with_indices", "F.adaptive_max_pool2d_with_indices",
                   "F.adaptive_max_pool3d_with_indices")(adaptive_max_windows)


# --- fractional max pooling ---------------------------------------------------------------
def _fractional_starts(sample: float, n_in: int, n_out: int, kernel: int) -> list[int]:
    """torch's interval starts for one plane and axis, in float32 as torch computes them."""
    starts = [0] * n_out
    if n_out > 1:
        alpha = np.float32(n_in - kernel) / np.float32(n_out - 1)
        u = np.float32(sample)
        for i in range(n_out - 1):
            starts[i] = int(np.float32(np.float32(i) + u) * alpha) - int(u * alpha)
    if n_out > 0:
        starts[-1] = n_in - kernel
    return starts


def _samples(ctx, op) -> np.ndarray:
    """The (N, C, n) random samples, which must be a recorded constant."""
    if "_random_samples" in op.attrs:
        return ctx.attr(op, "_random_samples").astype(np.float32)
    operand = op.input("_random_samples", 1)
    if operand is None:
        raise Unsupported("no _random_samples: the windows are drawn at run time")
    return constant_attribute(operand, "_random_samples").to_numpy().astype(np.float32)


def _sample_column(n: int, axis: int) -> int:
    """Which sample drives spatial axis `axis`: torch reads (W, H) in 2-D and (T, H, W) in 3-D."""
    return 1 - axis if n == 2 else axis


def _fractional_indices(samples, shape, axis, column, n_out, kernel) -> np.ndarray:
    """GatherElements indices pooling `axis` of a tensor of `shape`: per plane (N, C) the
    window positions along `axis`, broadcast over the other axes."""
    planes = samples.shape[:2]
    starts = np.array([[_fractional_starts(samples[i, j, column], shape[axis], n_out, kernel)
                        for j in range(planes[1])] for i in range(planes[0])], np.int64)
    positions = starts[..., None] + np.arange(kernel)           # (N, C, o, k)
    positions = positions.reshape(planes + (1,) * (axis - 2) + (n_out * kernel,)
                                  + (1,) * (len(shape) - axis - 1))
    target = list(shape)
    target[axis] = n_out * kernel
    return np.ascontiguousarray(np.broadcast_to(positions, target))


def _fractional_axis(ctx, x: str, shape: list[int], axis: int, indices: np.ndarray, n_out: int,
                     kernel: int, out: str | None) -> str:
    gathered = ctx.node("GatherElements", [x, ctx.const(indices, hint="window")], axis=axis)
    split = shape[:axis] + [n_out, kernel] + shape[axis + 1:]
    grouped = ctx.node("Reshape", [gathered, ctx.const(split, hint="shape")])
    return ctx.node("ReduceMax", [grouped, ctx.const([axis + 1], hint="axes")], out or 1, keepdims=0)


def _fractional_with_indices(ctx, op, samples, kernel: list[int], n: int) -> None:
    shape, out_shape = ctx.shape(op.inputs[0]), ctx.shape(op.outputs[0])
    _check_index_output(ctx, op)

    def plane_table(plane_samples):
        windows = [np.array(_fractional_starts(plane_samples[_sample_column(n, d)], shape[2 + d],
                                               out_shape[2 + d], kernel[d]))[:, None]
                   + np.arange(kernel[d]) for d in range(n)]
        return _window_table(windows, shape[2:])

    table = np.stack([np.stack([plane_table(samples[i, j]) for j in range(shape[1])])
                      for i in range(shape[0])])
    _pool_with_indices(ctx, op, table, n)


@LOWERINGS.register("F.fractional_max_pool2d", "F.fractional_max_pool3d", "nn.FractionalMaxPool2d",
                    "nn.FractionalMaxPool3d", "F.fractional_max_pool2d_with_indices",
                    "F.fractional_max_pool3d_with_indices", unbatched_rank=unbatched_rank)
def fractional_max_pool(ctx, op):
    n = spatial_rank(op.type)
    shape, out_shape = ctx.shape(op.inputs[0]), ctx.shape(op.outputs[0])
    samples = _samples(ctx, op)
    if len(shape) != n + 2 or min(shape + out_shape) < 1:
        raise Unsupported("needs (N, C, ...) or (C, ...) input of static shape")
    if samples.shape != (shape[0], shape[1], n):
        raise Unsupported(f"_random_samples of shape {samples.shape} for input {shape}")
    kernel = ints(op.params["kernel_size"], n, "kernel_size")
    if np.prod(shape) * max(kernel) > _MAX_INDEX_ELEMENTS:
        raise Unsupported("input too large for constant window indices")
    if op.params.get("return_indices") or len(op.outputs) > 1:
        _fractional_with_indices(ctx, op, samples, kernel, n)
        return
    x, current = ctx.x(op), list(shape)
    for d in range(n):
        axis = 2 + d
        indices = _fractional_indices(samples, current, axis, _sample_column(n, d),
                                      out_shape[axis], kernel[d])
        x = _fractional_axis(ctx, x, current, axis, indices, out_shape[axis], kernel[d],
                             ctx.y(op) if d == n - 1 else None)
        current[axis] = out_shape[axis]
