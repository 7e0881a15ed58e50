"""Resampling: Upsample / interpolate -> Interp; grid_sample -> GridSample."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, as_list, dims_params, param
from ..registry import LOWERINGS

RESIZE_TYPE = {"nearest": 1, "bilinear": 2, "linear": 2, "bicubic": 3}


@LOWERINGS.register("nn.Upsample", "F.interpolate", "F.upsample", "nn.UpsamplingNearest2d",
                    "nn.UpsamplingBilinear2d", "F.upsample_nearest", "F.upsample_bilinear")
def interp(ctx: Context, op) -> None:
    mode = param(op, "mode", "nearest")
    if op.type in ("nn.UpsamplingBilinear2d", "F.upsample_bilinear"):
        mode, align = "bilinear", True
    else:
        align = bool(param(op, "align_corners", False))
    if mode not in RESIZE_TYPE:
        raise Unsupported(f"interpolation mode {mode!r} has no ncnn Interp equivalent")
    if param(op, "antialias", False):
        raise Unsupported("antialiased interpolation has no ncnn Interp equivalent")
    n = ctx.rank(op.inputs[0]) - 1
    if n not in (1, 2) or (n == 1 and mode not in ("linear", "nearest")) or (n == 2 and mode == "linear"):
        raise Unsupported(f"ncnn Interp resizes 1-d or 2-d spatial data; got {n}-d with mode {mode}")
    p = {0: RESIZE_TYPE[mode], 6: int(align)}
    scale = param(op, "scale_factor")
    out = ctx.shape(op.outputs[0])
    if scale is not None and not param(op, "recompute_scale_factor", False):
        s = [float(v) for v in as_list(scale, n)]
        p[2], p[1] = s[-1], (s[0] if n == 2 else 1.0)
    else:
        p[4], p[3] = int(out[-1]), int(out[1] if n == 2 else 1)
    if n == 2:
        ctx.emit("Interp", "interpolate", [ctx.blob(op.inputs[0])], [op.outputs[0].name], p)
        return
    # ncnn Interp resizes (c, h, w) blobs: a 1-d signal goes through (c, 1, w)
    c, w = ctx.shape(op.inputs[0])
    tall, resized = ctx.temp(op.outputs[0].name), ctx.temp(op.outputs[0].name)
    ctx.emit("Reshape", "reshape", [ctx.blob(op.inputs[0])], [tall], dims_params([c, 1, w]))
    ctx.emit("Interp", "interpolate", [tall], [resized], p)
    ctx.emit("Reshape", "reshape", [resized], [op.outputs[0].name], dims_params(out))


GRID_SAMPLE_MODE = {"bilinear": 1, "nearest": 2, "bicubic": 3}

GRID_SAMPLE_PADDING = {"zeros": 1, "border": 2, "reflection": 3}


@LOWERINGS.register("F.grid_sample")
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
