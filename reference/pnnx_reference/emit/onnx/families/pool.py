"""Pooling and resampling: MaxPool, AveragePool, Global*Pool, LpPool, Resize, DepthToSpace;
pixel_unshuffle and channel_shuffle decompose (no ONNX operator with torch's ordering)."""
from __future__ import annotations

import numpy as np

from ..builder import ints
from ..dtypes import numpy_type
from ..registry import Unsupported, lowering


def _n(op_type: str) -> int:
    return int(op_type.rstrip("d")[-1])


def _spatial(b, op) -> int:
    """Spatial rank: from the type (`...Pool2d`), else (F.interpolate) from the input."""
    return _n(op.type) if op.type[-2].isdigit() else b.rank(op.inputs[0]) - 2


def _check_batched(b, op, n):
    if b.rank(op.inputs[0]) != n + 2:
        raise Unsupported("unbatched input (no batch dimension)")


def _window(op, n):
    kernel = ints(op.params["kernel_size"], n, "kernel_size")
    stride = op.params.get("stride")
    stride = kernel if stride in (None, []) else ints(stride, n, "stride")
    pad = ints(op.params.get("padding", 0), n, "padding")
    return kernel, stride, pad + pad


@lowering("nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d", "F.max_pool1d", "F.max_pool2d",
          "F.max_pool3d")
def max_pool(b, op):
    if op.params.get("return_indices") or len(op.outputs) > 1:
        from .pool_indices import max_pool_with_indices  # (it imports this module's helpers)

        return max_pool_with_indices(b, op)
    n = _n(op.type)
    _check_batched(b, op, n)
    kernel, stride, pads = _window(op, n)
    b.node("MaxPool", [b.x(op)], b.y(op), kernel_shape=kernel, strides=stride, pads=pads,
           dilations=ints(op.params.get("dilation", 1), n, "dilation"),
           ceil_mode=int(bool(op.params.get("ceil_mode", False))))


@lowering("nn.AvgPool1d", "nn.AvgPool2d", "nn.AvgPool3d", "F.avg_pool1d", "F.avg_pool2d",
          "F.avg_pool3d")
def avg_pool(b, op):
    n = _n(op.type)
    _check_batched(b, op, n)
    if op.params.get("divisor_override") is not None:
        raise Unsupported("divisor_override")
    kernel, stride, pads = _window(op, n)
    b.node("AveragePool", [b.x(op)], b.y(op), kernel_shape=kernel, strides=stride, pads=pads,
           ceil_mode=int(bool(op.params.get("ceil_mode", False))),
           count_include_pad=int(bool(op.params.get("count_include_pad", True))))


@lowering("nn.LPPool1d", "nn.LPPool2d", "nn.LPPool3d", "F.lp_pool1d", "F.lp_pool2d", "F.lp_pool3d")
def lp_pool(b, op):
    n = _n(op.type)
    _check_batched(b, op, n)
    p = float(op.params["norm_type"])
    if p != int(p):
        raise Unsupported(f"norm_type={p}: ONNX LpPool takes an integer p")
    if op.params.get("ceil_mode"):
        raise Unsupported("ceil_mode=True: torch rescales partial windows by the full kernel size")
    kernel, stride, _ = _window(op, n)
    b.node("LpPool", [b.x(op)], b.y(op), kernel_shape=kernel, strides=stride, p=int(p),
           ceil_mode=int(bool(op.params.get("ceil_mode", False))))


def _adaptive(global_op, window_op, spatial=None):
    def lower(b, op):
        n = spatial or _n(op.type)
        _check_batched(b, op, n)
        if op.params.get("return_indices") or len(op.outputs) > 1:
            raise Unsupported("return_indices")
        in_sp = b.shape(op.inputs[0])[2:]
        out_sp = b.shape(op.outputs[0])[2:]
        if all(o == 1 for o in out_sp):
            b.node(global_op, [b.x(op)], b.y(op))
            return
        if any(d < 0 for d in in_sp + out_sp) or any(i % o for i, o in zip(in_sp, out_sp)):
            raise Unsupported("output_size must divide a static input size (or be 1)")
        kernel = [i // o for i, o in zip(in_sp, out_sp)]
        b.node(window_op, [b.x(op)], b.y(op), kernel_shape=kernel, strides=kernel)
    return lower


def _adaptive_avg(b, op):
    try:
        _adaptive("GlobalAveragePool", "AveragePool", _spatial(b, op))(b, op)
    except Unsupported:
        _adaptive_avg_matmul(b, op)


def _averaging_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_in, n_out): column j averages torch's adaptive window j."""
    m = np.zeros((n_in, n_out), np.float32)
    for j in range(n_out):
        start, end = (j * n_in) // n_out, -((-(j + 1) * n_in) // n_out)
        m[start:end, j] = 1.0 / (end - start)
    return m


def _adaptive_avg_matmul(b, op):
    """Windows of unequal size: average is linear and separable, so one MatMul per spatial
    axis with a constant averaging matrix (ONNX has no adaptive pooling)."""
    n = _spatial(b, op)
    rank = b.rank(op.inputs[0])
    shape, out = b.shape(op.inputs[0])[-n:], b.shape(op.outputs[0])[-n:]
    if min(shape + out) < 0 or not b.is_float(op.inputs[0]):
        raise Unsupported("unequal windows need static spatial sizes and float input")
    dt = b.dtype(op.inputs[0])

    def matrix(i, transpose):
        m = _averaging_matrix(shape[i], out[i])
        return b.const((m.T if transpose else m).astype(numpy_type(dt)), dt, "avg")

    y = b.node("MatMul", [b.x(op), matrix(-1, False)], b.y(op) if n == 1 else 1)
    if n >= 2:
        y = b.node("MatMul", [matrix(-2, True), y], b.y(op) if n == 2 else 1)
    if n == 3:  # depth: fold (oH, oW) together so depth is the second-to-last axis
        keep = [0] * (rank - 3)
        flat = b.node("Reshape", [y, b.const(keep + [shape[0], out[1] * out[2]], hint="shape")])
        pooled = b.node("MatMul", [matrix(0, True), flat])
        b.node("Reshape", [pooled, b.const(keep + out, hint="shape")], b.y(op))


lowering("nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveAvgPool3d",
         "F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d")(_adaptive_avg)


@lowering("nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d",
          "F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d")
def adaptive_max(b, op):
    try:
        _adaptive("GlobalMaxPool", "MaxPool")(b, op)
    except Unsupported:  # unequal windows or unbatched input
        from .pool_windows import adaptive_max_windows

        adaptive_max_windows(b, op)


@lowering("nn.PixelShuffle", "F.pixel_shuffle")
def pixel_shuffle(b, op):
    if b.rank(op.inputs[0]) != 4:
        raise Unsupported("DepthToSpace takes 4-D input")
    b.node("DepthToSpace", [b.x(op)], b.y(op), blocksize=int(op.params["upscale_factor"]),
           mode="CRD")


@lowering("nn.PixelUnshuffle", "F.pixel_unshuffle")
def pixel_unshuffle(b, op):
    # SpaceToDepth orders channels block-major; torch orders them channel-major
    if b.rank(op.inputs[0]) != 4:
        raise Unsupported("needs 4-D input")
    n, c, h, w = b.shape(op.inputs[0])
    r = int(op.params["downscale_factor"])
    if min(c, h, w) < 0:
        raise Unsupported("needs static C, H, W")
    split = b.node("Reshape", [b.x(op), b.const([0, c, h // r, r, w // r, r], hint="shape")])
    moved = b.node("Transpose", [split], perm=[0, 1, 3, 5, 2, 4])
    b.node("Reshape", [moved, b.const([0, c * r * r, h // r, w // r], hint="shape")], b.y(op))


@lowering("nn.ChannelShuffle", "F.channel_shuffle")
def channel_shuffle(b, op):
    shape = b.shape(op.inputs[0])
    g, c = int(op.params["groups"]), shape[1]
    if c < 0 or any(d < 0 for d in shape[2:]):
        raise Unsupported("needs static channel and spatial sizes")
    split = b.node("Reshape", [b.x(op), b.const([0, g, c // g] + shape[2:], hint="shape")])
    perm = [0, 2, 1] + list(range(3, len(shape) + 1))
    moved = b.node("Transpose", [split], perm=perm)
    b.node("Reshape", [moved, b.const([0, c] + shape[2:], hint="shape")], b.y(op))


_RESIZE_MODES = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear",
                 "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}


@lowering("nn.Upsample", "nn.UpsamplingNearest2d", "nn.UpsamplingBilinear2d", "F.interpolate",
          "F.upsample", "F.upsample_nearest", "F.upsample_bilinear")
def resize(b, op):
    mode = _mode(op)
    if mode == "area":  # torch computes it as adaptive average pooling
        _adaptive_avg(b, op)
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
    inputs = _scales_or_sizes(b, op)
    if len(inputs) == 3:  # sizes of the spatial axes only, so N and C may stay dynamic
        attrs["axes"] = list(range(2, b.rank(op.inputs[0])))
    b.node("Resize", [b.x(op)] + inputs, b.y(op), **attrs)


def _mode(op) -> str:
    if op.type in ("nn.UpsamplingNearest2d", "F.upsample_nearest"):
        return "nearest"
    if op.type in ("nn.UpsamplingBilinear2d", "F.upsample_bilinear"):
        return "bilinear"
    return op.params.get("mode", "nearest")


def _scales_or_sizes(b, op) -> list[str]:
    """torch uses the given scale_factor for the coordinate map (unless recompute_scale_factor),
    so pass scales then; otherwise pass the output sizes."""
    rank = b.rank(op.inputs[0])
    scale = op.params.get("scale_factor")
    if scale is not None and not op.params.get("recompute_scale_factor"):
        factors = [float(f) for f in (scale if isinstance(scale, (list, tuple)) else [scale])]
        scales = [1.0, 1.0] + (factors * (rank - 2) if len(factors) == 1 else factors)
        return ["", b.const(scales, "f32", "scales")]
    out = b.shape(op.outputs[0])
    if any(d < 0 for d in out[2:]):
        size = op.params.get("size")
        if size is None:
            raise Unsupported("dynamic output size without scale_factor")
        out = out[:2] + ints(size, rank - 2, "size")
    return ["", "", b.const(out[2:], hint="sizes")]


_GRID_MODES = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}


@lowering("F.grid_sample")
def grid_sample(b, op):
    mode = op.params.get("mode", "bilinear")
    if mode not in _GRID_MODES:
        raise Unsupported(f"mode={mode!r}")
    grid = b.named_input(op, "grid", 1)
    b.node("GridSample", [b.x(op), grid.name], b.y(op), mode=_GRID_MODES[mode],
           padding_mode=op.params.get("padding_mode", "zeros"),
           align_corners=int(bool(op.params.get("align_corners"))))


@lowering("F.affine_grid")
def affine_grid(b, op):
    size = ints(op.params["size"], len(op.params["size"]), "size")
    b.node("AffineGrid", [b.x(op), b.const(size, hint="size")], b.y(op),
           align_corners=int(bool(op.params.get("align_corners"))))


@lowering("nn.Fold", "F.fold")
def fold(b, op):
    size = ints(op.params["output_size"], 2, "output_size")
    kernel = ints(op.params["kernel_size"], 2, "kernel_size")
    if b.rank(op.inputs[0]) != 3:
        raise Unsupported("unbatched input")
    pad = ints(op.params.get("padding", 0), 2, "padding")
    b.node("Col2Im", [b.x(op), b.const(size, hint="image_shape"), b.const(kernel, hint="block")],
           b.y(op), dilations=ints(op.params.get("dilation", 1), 2, "dilation"), pads=pad + pad,
           strides=ints(op.params.get("stride", 1), 2, "stride"))
