"""Resampling: Upsample / interpolate -> Resize (mode="area" is adaptive average pooling,
see pooling.py); grid_sample -> GridSample; affine_grid -> AffineGrid."""
from __future__ import annotations

from ....errors import Unsupported
from ...shape_lists import shape_items
from ..builder import ints
from ..pooling import adaptive_average
from ..registry import LOWERINGS

_RESIZE_MODES = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear",
                 "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}


@LOWERINGS.register("nn.Upsample", "nn.UpsamplingNearest2d", "nn.UpsamplingBilinear2d", "F.interpolate",
                    "F.upsample", "F.upsample_nearest", "F.upsample_bilinear")
def resize(ctx, op):
    mode = _mode(op)
    if mode == "area":  # torch computes it as adaptive average pooling
        adaptive_average(ctx, op)
        return
    if mode not in _RESIZE_MODES:
        raise Unsupported(f"mode={mode!r}")
    if op.params.get("antialias"):
        raise Unsupported("antialias=True")
    align = bool(op.params.get("align_corners")) or op.type in ("nn.UpsamplingBilinear2d",
                                                                 "F.upsample_bilinear")
    attrs = {"mode": _RESIZE_MODES[mode]}
    if mode == "nearest":
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    elif mode == "nearest-exact":
        attrs.update(coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    else:
        # torch maps (dst + 0.5) / scale - 0.5 even for a length-1 output: ONNX half_pixel
        attrs["coordinate_transformation_mode"] = "align_corners" if align else "half_pixel"
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    inputs = _scales_or_sizes(ctx, op)
    if len(inputs) == 3:  # sizes of the spatial axes only, so N and C may stay dynamic
        attrs["axes"] = list(range(2, ctx.rank(op.inputs[0])))
    ctx.node("Resize", [ctx.x(op)] + inputs, ctx.y(op), **attrs)


def _mode(op) -> str:
    if op.type in ("nn.UpsamplingNearest2d", "F.upsample_nearest"):
        return "nearest"
    if op.type in ("nn.UpsamplingBilinear2d", "F.upsample_bilinear"):
        return "bilinear"
    return op.params.get("mode", "nearest")


def _scales_or_sizes(ctx, op) -> list[str]:
    """torch uses the given scale_factor for the coordinate map (unless recompute_scale_factor),
    so pass scales then; otherwise pass the output sizes."""
    rank = ctx.rank(op.inputs[0])
    scale = op.params.get("scale_factor")
    if scale is not None and not op.params.get("recompute_scale_factor"):
        factors = [float(f) for f in (scale if isinstance(scale, (list, tuple)) else [scale])]
        scales = [1.0, 1.0] + (factors * (rank - 2) if len(factors) == 1 else factors)
        return ["", ctx.const(scales, "f32", "scales")]
    out = ctx.shape(op.outputs[0])
    computed = op.input("size")
    if any(d < 0 for d in out[2:]) and computed is not None and shape_items(computed) is not None:
        return ["", "", computed.name]  # the sizes as the pnnx.Expression computes them at run time
    if any(d < 0 for d in out[2:]):
        size = op.params.get("size")
        if size is None:
            raise Unsupported("dynamic output size without scale_factor")
        out = out[:2] + ints(size, rank - 2, "size")
    return ["", "", ctx.const(out[2:], hint="sizes")]


_GRID_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


@LOWERINGS.register("F.grid_sample")
def grid_sample(ctx, op):
    mode = op.params.get("mode", "bilinear")
    if mode not in _GRID_MODES:
        raise Unsupported(f"mode={mode!r}")
    grid = op.input("grid", 1)
    ctx.node("GridSample", [ctx.x(op), grid.name], ctx.y(op), mode=_GRID_MODES[mode],
           padding_mode=op.params.get("padding_mode", "zeros"),
           align_corners=int(bool(op.params.get("align_corners"))))


@LOWERINGS.register("F.affine_grid")
def affine_grid(ctx, op):
    size = ints(op.params["size"], len(op.params["size"]), "size")
    ctx.node("AffineGrid", [ctx.x(op), ctx.const(size, hint="size")], ctx.y(op),
           align_corners=int(bool(op.params.get("align_corners"))))
