"""Resize / Upsample -> `F.interpolate` where PyTorch has the same sampling (nearest as
asymmetric+floor or half_pixel+round_prefer_ceil, linear and cubic(-0.75) as half_pixel or
align_corners). Other coordinate and rounding modes are resampled exactly as the ONNX spec
says, one axis at a time: constant indices (`torch.index_select`) and weights for the input
size at hand (a dynamic size then refuses to merge, it is never silently fixed)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import RULES
from .common import axes as normalized

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


def _resize(ctx, x, plan: Plan, mode: str, transform_name: str, nearest_mode: str, cubic_a: float,
            exclude_outside: bool, antialias: bool):
    r = x.dim()
    transform = _TRANSFORMS.get(transform_name)
    if transform is None:
        ctx.fail(f"coordinate_transformation_mode {transform_name!r} is not supported")
    single_pixel = any(int(o) == 1 for o in plan.outs)
    half_pixel = transform_name == "half_pixel" or (transform_name == "pytorch_half_pixel" and not single_pixel)
    if mode == "nearest" and not antialias:
        if transform_name == "asymmetric" and nearest_mode == "floor":
            return _interpolate(x, plan, "nearest")
        if half_pixel and (nearest_mode == "round_prefer_ceil" or not _ties(plan, transform)):
            return _interpolate(x, plan, "nearest-exact")
    if mode == "linear" and r in _LINEAR and (half_pixel or transform_name == "align_corners"):
        if not antialias or r == 4:
            return _interpolate(x, plan, _LINEAR[r], align_corners=transform_name == "align_corners",
                                **({"antialias": True} if antialias else {}))
    if mode == "cubic" and r == 4 and abs(cubic_a + 0.75) < 1e-6 and not exclude_outside \
            and (half_pixel or transform_name == "align_corners"):
        return _interpolate(x, plan, "bicubic", align_corners=transform_name == "align_corners",
                            **({"antialias": True} if antialias else {}))
    if antialias and any(s < 1 for s in plan.scales):
        ctx.fail(f"antialiased {mode} downsampling with {transform_name} coordinates has no PyTorch operator")
    return _separable(x, plan, mode, transform, nearest_mode, cubic_a, exclude_outside)


# --- the spec's sampling, one axis at a time ----------------------------------------------
def _half_pixel(i, scale, size_in, size_out):
    return (i + 0.5) / scale - 0.5


def _half_pixel_symmetric(i, scale, size_in, size_out):
    adjustment = size_out / (scale * size_in)
    return size_in / 2 * (1 - adjustment) + (i + 0.5) / scale - 0.5


_TRANSFORMS = {
    "half_pixel": _half_pixel,
    "half_pixel_symmetric": _half_pixel_symmetric,
    "pytorch_half_pixel": lambda i, s, n_in, n_out: (i + 0.5) / s - 0.5 if n_out > 1 else 0.0,
    "align_corners": lambda i, s, n_in, n_out: 0.0 if n_out == 1 else i * (n_in - 1) / (n_out - 1),
    "asymmetric": lambda i, s, n_in, n_out: i / s,
    "tf_half_pixel_for_nn": lambda i, s, n_in, n_out: (i + 0.5) / s,
}

_ROUND = {
    "round_prefer_floor": lambda v: math.ceil(v - 0.5),
    "round_prefer_ceil": lambda v: math.floor(v + 0.5),
    "floor": math.floor,
    "ceil": math.ceil,
}


def _cubic(distance: float, a: float) -> float:
    d = abs(distance)
    if d <= 1:
        return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    if d < 2:
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return 0.0


def _taps(mode, original: float, size_in: int, nearest_mode: str, cubic_a: float, exclude_outside: bool):
    """(input index, weight) pairs for one output pixel."""
    if mode == "nearest":
        return [(min(max(_ROUND[nearest_mode](original), 0), size_in - 1), 1.0)]
    base = math.floor(original)
    if mode == "linear":
        frac = original - base
        points = [(base, 1 - frac), (base + 1, frac)]
    else:
        points = [(base + k, _cubic(original - (base + k), cubic_a)) for k in (-1, 0, 1, 2)]
        if exclude_outside:
            points = [(i, w if 0 <= i < size_in else 0.0) for i, w in points]
            total = sum(w for _, w in points)
            points = [(i, w / total) for i, w in points]
    return [(min(max(i, 0), size_in - 1), w) for i, w in points]


def _separable(x, plan: Plan, mode, transform, nearest_mode, cubic_a, exclude_outside):
    if nearest_mode not in _ROUND:
        raise ValueError(f"nearest_mode {nearest_mode!r}")
    for k, (size_in, size_out, scale) in enumerate(zip(plan.ins, plan.outs, plan.scales)):
        size_in, size_out, dim = int(size_in), int(size_out), 2 + k
        if size_in == size_out and scale == 1.0 and mode == "nearest":
            continue
        taps = [_taps(mode, transform(i, scale, size_in, size_out), size_in, nearest_mode, cubic_a, exclude_outside)
                for i in range(size_out)]
        count = len(taps[0])
        shape = [1] * x.dim()
        shape[dim] = size_out
        out = None
        for t in range(count):
            index = torch.tensor([p[t][0] for p in taps], dtype=torch.int64)
            picked = torch.index_select(x, dim, index)
            if mode != "nearest":
                weight = torch.tensor([p[t][1] for p in taps], dtype=x.dtype).reshape(shape)
                picked = picked * weight
            out = picked if out is None else out + picked
        x = out
    return x


@rule("Resize")
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


@rule("Upsample")
def upsample(ctx):
    """Opsets 7-9 (deprecated in 10): Resize with asymmetric coordinates and floor rounding."""
    x = ctx.tensor(0)
    scales = ctx.attr("scales") if ctx.opset < 9 else [float(v) for v in ctx.ints(1, "scales")]
    plan = _plan(ctx, x, scales, None)
    return _resize(ctx, x, plan, ctx.attr("mode", "nearest"), "asymmetric", "floor", -0.75, False, False)
