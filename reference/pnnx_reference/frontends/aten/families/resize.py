"""Upsampling and grid sampling back to F.interpolate, F.grid_sample, F.affine_grid."""
from __future__ import annotations

import math

import torch.nn.functional as F

from ..registry import rule
from ..written import short


_UPSAMPLE = {"upsample_nearest1d": "nearest", "upsample_nearest2d": "nearest",
             "upsample_nearest3d": "nearest", "upsample_linear1d": "linear",
             "upsample_bilinear2d": "bilinear", "upsample_trilinear3d": "trilinear",
             "upsample_bicubic2d": "bicubic", "_upsample_nearest_exact1d": "nearest-exact",
             "_upsample_nearest_exact2d": "nearest-exact", "_upsample_nearest_exact3d": "nearest-exact",
             "_upsample_bilinear2d_aa": "bilinear", "_upsample_bicubic2d_aa": "bicubic"}


@rule(*_UPSAMPLE, produces=("F.interpolate",))
def _upsample(name, kw):
    """F.interpolate in its size or scale_factor form: the `.vec` overloads take `input` and
    either list, the others `self`, the output size and one scale per dim."""
    x = kw["input"] if "input" in kw else kw["self"]
    size, scale = kw.get("output_size"), _scales(kw)
    if size is not None and scale is not None and not _scale_gives(x, scale, size):
        scale = None
    if scale is not None:
        size = None
    extra = {"align_corners": kw["align_corners"]} if "align_corners" in kw else {}
    return F.interpolate(x, size=size, scale_factor=short(scale), mode=_UPSAMPLE[name],
                         antialias=name.endswith("_aa"), **extra)


def _scales(kw) -> list | None:
    if kw.get("scale_factors") is not None:
        return list(kw["scale_factors"])
    scales = [kw[k] for k in ("scales_d", "scales_h", "scales_w", "scales") if k in kw]
    return scales if scales and all(s is not None for s in scales) else None


def _scale_gives(x, scale, size) -> bool:
    """Whether floor(in * scale) is the output size in every dim (then the scale is what the
    model passed, and it also decides where samples fall)."""
    return all(math.floor(int(i) * float(s)) == int(o) for i, s, o in zip(x.shape[2:], scale, size))


@rule("grid_sampler", produces=("F.grid_sample",))
def _grid_sampler(name, kw):
    mode = ("bilinear", "nearest", "bicubic")[kw["interpolation_mode"]]
    padding = ("zeros", "border", "reflection")[kw["padding_mode"]]
    return F.grid_sample(kw["input"], kw["grid"], mode=mode, padding_mode=padding,
                         align_corners=kw["align_corners"])


@rule("affine_grid_generator", produces=("F.affine_grid",))
def _affine_grid(name, kw):
    return F.affine_grid(kw["theta"], kw["size"], align_corners=kw["align_corners"])
