"""Resize / Upsample -> `F.interpolate` where PyTorch has the same sampling (nearest as
asymmetric+floor or half_pixel+round_prefer_ceil, linear and cubic(-0.75) as half_pixel or
align_corners). Other coordinate and rounding modes are resampled exactly as the ONNX spec
says, one axis at a time: constant indices (`torch.index_select`) and weights for the input
size at hand (a dynamic size then refuses to merge, it is never silently fixed).

GridSample -> `F.grid_sample`, AffineGrid -> `F.affine_grid` (the emitters' resize family)."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..values import constant
from .operands import axes as normalized
from .registry import RULES

rule = RULES.register

_LINEAR = {3: "linear", 4: "bilinear", 5: "trilinear"}


class Plan:
    """What to resize: per spatial axis its input size, output size and scale."""

    def __init__(self, ins, outs, scales, given_scales: bool):
        self.ins, self.outs, self.scales, self.given_scales = ins, outs, scales, given_scales


def _plan(ctx, x, scales, dims) -> Plan:
    r = x.dim()
    ins = list(x.shape)
    axes = normalized(ctx.attr("axes") or list(range(r)), r)
    full_scales, outs = [1.0] * r, list(ins)
    if scales:
        for a, s in zip(axes, scales):
            full_scales[a] = float(s)
            outs[a] = int(math.floor(int(ins[a]) * float(s)))
        given = True
    else:
        targets = {a: d for a, d in zip(axes, dims)}
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            ratios = [int(targets[a]) / int(ins[a]) for a in axes]
            ratio = min(ratios) if policy == "not_larger" else max(ratios)
            targets = {a: int(math.floor(int(ins[a]) * ratio + 0.5)) for a in axes}
            for a in axes:
                full_scales[a] = ratio
        for a, d in targets.items():
            outs[a] = d
            if policy == "stretch":
                full_scales[a] = int(d) / int(ins[a])
        given = False
    if any(int(outs[a]) != int(ins[a]) or full_scales[a] != 1.0 for a in (0, 1)):
        ctx.fail("resizing the batch or channel axis has no PyTorch operator")
    return Plan(ins[2:], outs[2:], full_scales[2:], given)


def _interpolate(x, plan: Plan, mode: str, **kwargs):
    if plan.given_scales:
        return F.interpolate(x, scale_factor=tuple(plan.scales), mode=mode, **kwargs)
    return F.interpolate(x, size=tuple(plan.outs), mode=mode, **kwargs)


def _ties(plan: Plan, transform) -> bool:
    """Whether some output pixel maps exactly between two input pixels (x.5)."""
    for size_in, size_out, scale in zip(plan.ins, plan.outs, plan.scales):
        for i in range(int(size_out)):
            original = transform(i, scale, int(size_in), int(size_out))
            if abs(original - math.floor(original) - 0.5) < 1e-9:
                return True
    return False


def _integral_outputs(plan: Plan) -> bool:
    """scale * input size is a whole number on every axis: PyTorch's align_corners (which uses
    the output size) and the spec's (which uses scale * input size) agree."""
    return all(abs(s * int(i) - int(o)) < 1e-9 for i, o, s in zip(plan.ins, plan.outs, plan.scales))


def _resize(ctx, x, plan: Plan, mode: str, transform_name: str, nearest_mode: str, cubic_a: float,
            exclude_outside: bool, antialias: bool):
    r = x.dim()
    transform = _TRANSFORMS.get(transform_name)
    if transform is None:
        ctx.fail(f"coordinate_transformation_mode {transform_name!r} is not supported")
    single_pixel = any(int(o) == 1 for o in plan.outs)
    half_pixel = transform_name == "half_pixel" or (transform_name == "pytorch_half_pixel" and not single_pixel)
    corners = transform_name == "align_corners" and _integral_outputs(plan)
    downsampling = antialias and any(s < 1 for s in plan.scales)
    if mode == "nearest":
        if transform_name == "asymmetric" and nearest_mode == "floor":
            return _interpolate(x, plan, "nearest")
        if half_pixel and (nearest_mode == "round_prefer_ceil"
                           or (nearest_mode == "round_prefer_floor" and not _ties(plan, transform))):
            return _interpolate(x, plan, "nearest-exact")
    elif mode == "linear" and r in _LINEAR and (half_pixel or corners) and not downsampling:
        return _interpolate(x, plan, _LINEAR[r], align_corners=corners)
    elif mode == "cubic" and r == 4 and abs(cubic_a + 0.75) < 1e-6 and not exclude_outside \
            and (half_pixel or corners) and not downsampling:
        return _interpolate(x, plan, "bicubic", align_corners=corners)
    return _separable(x, plan, mode, transform, nearest_mode, cubic_a, exclude_outside, antialias)


# --- the spec's sampling, one axis at a time ----------------------------------------------
# transform(output index, scale, input size, output size) -> input coordinate, where the
# output size is scale * input size, unrounded, as the spec's reference implementation uses it
def _half_pixel(i, scale, size_in, size_out):
    return (i + 0.5) / scale - 0.5


def _half_pixel_symmetric(i, scale, size_in, size_out):
    adjustment = int(size_out) / (scale * size_in)
    return size_in / 2 * (1 - adjustment) + (i + 0.5) / scale - 0.5


_TRANSFORMS = {
    "half_pixel": _half_pixel,
    "half_pixel_symmetric": _half_pixel_symmetric,
    "pytorch_half_pixel": lambda i, s, n_in, n_out: (i + 0.5) / s - 0.5 if s * n_in != 1 else -0.5,
    "align_corners": lambda i, s, n_in, n_out: 0.0 if s * n_in == 1 else i * (n_in - 1) / (s * n_in - 1),
    "asymmetric": lambda i, s, n_in, n_out: i / s,
    "tf_half_pixel_for_nn": lambda i, s, n_in, n_out: (i + 0.5) / s,
}

_NEAREST = {  # which of the two neighbours (0: below, 1: above) for a fraction in (0, 1)
    "round_prefer_floor": lambda ratio: 1 if ratio > 0.5 else 0,
    "round_prefer_ceil": lambda ratio: 1 if ratio >= 0.5 else 0,
    "floor": lambda ratio: 0,
    "ceil": lambda ratio: 1,
}


def _cubic(distance: float, a: float) -> float:
    d = abs(distance)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    if d < 2:
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return 0.0


def _coefficients(mode, ratio: float, scale: float, cubic_a: float, antialias: bool) -> tuple[int, list[float]]:
    """(offset of the first tap from floor, weights) for a point `ratio` in (0, 1] past floor."""
    if mode == "linear":
        if not antialias:
            return 0, [1 - ratio, ratio]
        scale = min(scale, 1.0)
        start = math.floor(-1 / scale) + 1
        weights = [max(0.0, 1 - abs((i - ratio) * scale)) for i in range(start, 2 - start)]
    else:
        if not antialias:
            return -1, [_cubic(ratio + 1, cubic_a), _cubic(ratio, cubic_a), _cubic(1 - ratio, cubic_a),
                        _cubic(2 - ratio, cubic_a)]
        scale = min(scale, 1.0)
        start = math.floor(-2 / scale) + 1
        weights = [_cubic(scale * (i - ratio), cubic_a) for i in range(start, 2 - start)]
    total = sum(weights)
    return start, [w / total for w in weights]


def _taps(mode, original: float, scale: float, size_in: int, nearest_mode: str, cubic_a: float,
          exclude_outside: bool, antialias: bool):
    """(input index, weight) pairs for one output pixel, as the spec computes them: a point on
    an input pixel counts as 1 past the pixel before it; neighbours beyond the edge repeat it."""
    base = math.floor(original)
    ratio = original - base
    if ratio == 0:
        base, ratio = base - 1, 1.0
    if mode == "nearest":
        picks = _NEAREST[nearest_mode](ratio) if ratio != 1.0 else 1
        return [(min(max(base + picks, 0), size_in - 1), 1.0)]
    start, weights = _coefficients(mode, ratio, scale, cubic_a, antialias)
    points = [(base + start + k, w) for k, w in enumerate(weights)]
    if exclude_outside:
        points = [(i, w if 0 <= i < size_in else 0.0) for i, w in points]
        total = sum(w for _, w in points)
        points = [(i, w / total) for i, w in points]
    return [(min(max(i, 0), size_in - 1), w) for i, w in points]


def _separable(x, plan: Plan, mode, transform, nearest_mode, cubic_a, exclude_outside, antialias):
    for k, (size_in, size_out, scale) in enumerate(zip(plan.ins, plan.outs, plan.scales)):
        size_in, size_out, dim = int(size_in), int(size_out), 2 + k
        if size_in == size_out and scale == 1.0:
            continue
        taps = [_taps(mode, transform(i, scale, size_in, size_out), scale, size_in, nearest_mode, cubic_a,
                      exclude_outside, antialias) for i in range(size_out)]
        shape = [1] * x.dim()
        shape[dim] = size_out
        out = None
        for t in range(len(taps[0])):
            index = constant([p[t][0] for p in taps], torch.int64)
            picked = torch.index_select(x, dim, index)
            if mode != "nearest":
                weight = constant(np.array([p[t][1] for p in taps]).reshape(shape), x.dtype)
                picked = picked * weight
            out = picked if out is None else out + picked
        x = out
    return x


@rule("Resize", produces=("F.interpolate", "Tensor.reshape", "torch.index_select"))
def resize(ctx):
    x = ctx.tensor(0)
    if ctx.opset >= 11:
        scales = [float(v) for v in ctx.ints(2, "scales")] if ctx.has(2) and _nonempty(ctx, 2) else None
        dims = ctx.ints(3, "sizes") if ctx.has(3) and _nonempty(ctx, 3) else None
        transform = ctx.attr("coordinate_transformation_mode", "half_pixel")
        nearest_mode = ctx.attr("nearest_mode", "round_prefer_floor")
    else:
        scales, dims = [float(v) for v in ctx.ints(1, "scales")], None
        transform, nearest_mode = "asymmetric", "floor"
    if transform == "tf_crop_and_resize":
        ctx.fail("tf_crop_and_resize (a region of interest) has no PyTorch operator")
    if scales is None and dims is None:
        ctx.fail("Resize needs scales or sizes")
    plan = _plan(ctx, x, scales, dims)
    return _resize(ctx, x, plan, ctx.attr("mode", "nearest"), transform, nearest_mode,
                   float(ctx.attr("cubic_coeff_a", -0.75)), bool(ctx.attr("exclude_outside", 0)),
                   bool(ctx.attr("antialias", 0)))


def _nonempty(ctx, i: int) -> bool:
    value = ctx.known(i)
    return value is None or bool(value.shape and value.shape[0])


@rule("Upsample", produces=("F.interpolate", "Tensor.reshape", "torch.index_select"))
def upsample(ctx):
    """Opsets 7-9 (deprecated in 10): Resize with asymmetric coordinates and floor rounding."""
    x = ctx.tensor(0)
    scales = ctx.attr("scales") if ctx.opset < 9 else [float(v) for v in ctx.ints(1, "scales")]
    plan = _plan(ctx, x, scales, None)
    return _resize(ctx, x, plan, ctx.attr("mode", "nearest"), "asymmetric", "floor", -0.75, False, False)


_GRID_MODES = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
          "cubic": "bicubic"}


@rule("GridSample", produces=("F.grid_sample",))
def grid_sample(ctx):
    x, grid = ctx.tensor(0), ctx.tensor(1)
    mode = ctx.attr("mode", "bilinear" if ctx.opset < 20 else "linear")
    if mode not in _GRID_MODES or (_GRID_MODES[mode] == "bicubic" and x.dim() != 4):
        ctx.fail(f"GridSample mode {mode!r} on a rank-{x.dim()} input has no PyTorch operator")
    return F.grid_sample(x, grid, mode=_GRID_MODES[mode], padding_mode=ctx.attr("padding_mode", "zeros"),
                         align_corners=bool(int(ctx.attr("align_corners", 0))))


@rule("AffineGrid", produces=("F.affine_grid",))
def affine_grid(ctx):
    theta = ctx.tensor(0)
    size = [int(v) for v in ctx.ints(1, "size")]
    return F.affine_grid(theta, size, align_corners=bool(int(ctx.attr("align_corners", 0))))
