"""Resampling: Upsample / interpolate -> Interp (area -> adaptive average Pooling); grid_sample ->
GridSample; affine_grid -> a MatMul of the base coordinates by theta."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ....ir import Operator
from ..context import Context, as_list, dims_params, param
from ..layers import Weight
from ..registry import FIRST, LOWERINGS
from ..shape_expr import ShapeRefs, is_dynamic, render_list, shape_items

RESIZE_TYPE = {"nearest": 1, "bilinear": 2, "linear": 2, "bicubic": 3}


@LOWERINGS.register("nn.Upsample", "F.interpolate", "F.upsample", "nn.UpsamplingNearest2d",
                    "nn.UpsamplingBilinear2d", "F.upsample_nearest", "F.upsample_bilinear", batch=FIRST)
def interp(ctx: Context, op) -> None:
    mode = param(op, "mode", "nearest")
    if op.type in ("nn.UpsamplingBilinear2d", "F.upsample_bilinear"):
        mode, align = "bilinear", True
    else:
        align = bool(param(op, "align_corners", False))
    n = ctx.rank(op.inputs[0]) - 1
    if mode == "area":
        _area(ctx, op, n)
        return
    if mode == "nearest-exact":
        if n not in (1, 2):
            raise Unsupported(f"ncnn Interp resizes 1-d or 2-d spatial data; got {n}-d with mode {mode}")
        _check_nearest_exact(ctx, op, n)
        mode = "nearest"
    if mode not in RESIZE_TYPE:
        raise Unsupported(f"interpolation mode {mode!r} has no ncnn Interp equivalent")
    if param(op, "antialias", False):
        raise Unsupported("antialiased interpolation has no ncnn Interp equivalent")
    if n not in (1, 2) or (n == 1 and mode not in ("linear", "nearest")) or (n == 2 and mode == "linear"):
        raise Unsupported(f"ncnn Interp resizes 1-d or 2-d spatial data; got {n}-d with mode {mode}")
    p = {0: RESIZE_TYPE[mode], 6: int(align)}
    scale = param(op, "scale_factor")
    out = ctx.shape(op.outputs[0])
    sized = shape_items(op.inputs[1]) if len(op.inputs) > 1 else None
    refs = ShapeRefs(ctx, op.inputs[:1])
    if sized is not None:  # a size that follows the input: ncnn evaluates it (w first)
        if n != 2:
            raise Unsupported("a 1-d resize to a size that follows the input is not lowered")
        p[9] = render_list(*sized, refs)
    elif scale is not None and not param(op, "recompute_scale_factor", False):
        s = [float(v) for v in as_list(scale, n)]
        p[2], p[1] = s[-1], (s[0] if n == 2 else 1.0)
    elif is_dynamic(out[-n:]):
        raise Unsupported("a resize to a size that follows the input without its traced sizes")
    else:
        p[4], p[3] = int(out[-1]), int(out[1] if n == 2 else 1)
    if n == 2:
        ctx.emit("Interp", "interpolate", refs.blobs, [op.outputs[0].name], p)
        return
    # ncnn Interp resizes (c, h, w) blobs: a 1-d signal goes through (c, 1, w)
    c, w = ctx.shape(op.inputs[0])
    tall, resized = ctx.temp(op.outputs[0].name), ctx.temp(op.outputs[0].name)
    ctx.emit("Reshape", "reshape", [ctx.blob(op.inputs[0])], [tall], dims_params([c, 1, w]))
    ctx.emit("Interp", "interpolate", [tall], [resized], p)
    ctx.emit("Reshape", "reshape", [resized], [op.outputs[0].name], dims_params(out))


def _area(ctx: Context, op, n: int) -> None:
    """torch computes area interpolation as adaptive average pooling to the output size: lowered
    as that operator."""
    if n not in (1, 2, 3):
        raise Unsupported(f"area interpolation of {n}-d spatial data")
    size = ctx.torch_shape(op.outputs[0])[-n:]
    pool = Operator(f"F.adaptive_avg_pool{n}d", op.name, [op.inputs[0]], [op.outputs[0]], {"output_size": size})
    ctx.lower_operator(pool)


def _check_nearest_exact(ctx: Context, op, n: int) -> None:
    """nearest-exact picks the pixels nearest (ncnn Interp 0=1) picks where each axis is enlarged
    by a whole factor s (output i reads floor((i + 0.5) / s) == floor(i / s)); a fractional or
    shrinking scale shifts its pick by half a pixel, which ncnn cannot express: refused."""
    scale = param(op, "scale_factor")
    given = as_list(scale, n) if scale is not None and not param(op, "recompute_scale_factor", False) else None
    sizes = zip(ctx.shape(op.inputs[0])[1:], ctx.shape(op.outputs[0])[1:])
    for i, (size_in, size_out) in enumerate(sizes):
        whole = size_in > 0 and size_out % size_in == 0
        if not whole or given is not None and float(given[i]) != size_out // size_in:
            factor = given[i] if given is not None else f"{size_out}/{size_in}"
            raise Unsupported(f"nearest-exact with scale {factor} along spatial dim {i}: it equals ncnn's "
                              "nearest only for whole enlargement factors")


GRID_SAMPLE_MODE = {"bilinear": 1, "nearest": 2, "bicubic": 3}

GRID_SAMPLE_PADDING = {"zeros": 1, "border": 2, "reflection": 3}


@LOWERINGS.register("F.grid_sample", batch=FIRST, batched_inputs=2)
def grid_sample(ctx: Context, op) -> None:
    """GridSample over a (1,C,H,W) input with a (1,Ho,Wo,2) grid, or (1,C,D,H,W) with (1,Do,Ho,Wo,3):
    0=sample type, 1=padding mode, 2=align_corners, 3=permute_fusion (grid kept as torch lays it)."""
    mode, padding = param(op, "mode", "bilinear"), param(op, "padding_mode", "zeros")
    if mode not in GRID_SAMPLE_MODE or padding not in GRID_SAMPLE_PADDING:
        raise Unsupported(f"grid_sample mode={mode!r} padding_mode={padding!r} has no ncnn GridSample equivalent")
    src, grid = op.inputs[:2]
    rank = ctx.rank(src)
    if rank not in (3, 4) or ctx.rank(grid) != rank or ctx.shape(grid)[-1] != rank - 1:
        raise Unsupported("ncnn GridSample takes a (1,C,H,W) input with a (1,H,W,2) grid "
                          "or a (1,C,D,H,W) input with a (1,D,H,W,3) grid")
    if mode == "bicubic" and rank == 4:
        raise Unsupported("bicubic grid_sample is 2-d only")
    p = {0: GRID_SAMPLE_MODE[mode], 1: GRID_SAMPLE_PADDING[padding],
         2: int(bool(param(op, "align_corners", False))), 3: 0}
    ctx.emit("GridSample", "gridsample", [ctx.blob(src), ctx.blob(grid)], [op.outputs[0].name], p)


def _base_grid(size: list[int], align_corners: bool):
    """torch's affine_grid base coordinates, one row per output position: (x, y[, z], 1), x along
    the last spatial dim, each spanning [-1, 1] (pixel centres unless align_corners)."""
    def steps(n: int):
        if align_corners:
            return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        return (np.arange(n) * 2.0 + 1.0) / n - 1.0

    spatial = [int(s) for s in size[2:]]
    axes = np.meshgrid(*[steps(n) for n in spatial], indexing="ij")  # (d,) h, w
    coords = [a.reshape(-1) for a in reversed(axes)] + [np.ones(int(np.prod(spatial)))]
    return np.stack(coords, axis=1).astype(np.float32), spatial


@LOWERINGS.register("F.affine_grid", batch=FIRST)
def affine_grid(ctx: Context, op) -> None:
    """grid = base @ theta^T per sample: a MemoryData of the (positions, k + 1) base coordinates
    times the (k, k + 1) theta (MatMul 0=1: B transposed), reshaped to (spatial..., k)."""
    size = param(op, "size")
    if not isinstance(size, (list, tuple)) or len(size) not in (4, 5) or not all(isinstance(s, int) for s in size):
        raise Unsupported("affine_grid needs a constant 4-d or 5-d size")
    theta = op.inputs[0]
    k = len(size) - 2
    if ctx.shape(theta) != [k, k + 1]:
        raise Unsupported(f"theta of shape {tuple(ctx.torch_shape(theta))} for a {len(size)}-d size")
    base, spatial = _base_grid(size, bool(param(op, "align_corners", False)))
    out = op.outputs[0].name
    coords, grid = ctx.temp(out), ctx.temp(out)
    ctx.emit("MemoryData", "affine_base", [], [coords], dims_params(list(base.shape)),
             [Weight(base.reshape(-1), tagged=False)])
    ctx.emit("MatMul", "affine_grid", [coords, ctx.blob(theta)], [grid], {0: 1})
    ctx.emit("Reshape", "reshape", [grid], [out], dims_params([*spatial, k]))
