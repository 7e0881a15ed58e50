"""Upsampling and grid sampling back to F.interpolate, F.grid_sample, F.affine_grid."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


_UPSAMPLE = {"upsample_nearest1d": "nearest", "upsample_nearest2d": "nearest",
             "upsample_nearest3d": "nearest", "upsample_linear1d": "linear",
             "upsample_bilinear2d": "bilinear", "upsample_trilinear3d": "trilinear",
             "upsample_bicubic2d": "bicubic", "_upsample_nearest_exact2d": "nearest-exact"}


@rule(*_UPSAMPLE)
def _upsample(name, kw):
    size, scale = kw.get("output_size"), kw.get("scale_factors", kw.get("scales"))
    extra = {"align_corners": kw["align_corners"]} if "align_corners" in kw else {}
    if size is not None and scale is not None:
        scale = None
    return F.interpolate(kw["input"], size=size, scale_factor=scale, mode=_UPSAMPLE[name], **extra)


@rule("grid_sampler")
def _grid_sampler(name, kw):
    mode = ("bilinear", "nearest", "bicubic")[kw["interpolation_mode"]]
    padding = ("zeros", "border", "reflection")[kw["padding_mode"]]
    return F.grid_sample(kw["input"], kw["grid"], mode=mode, padding_mode=padding,
                         align_corners=kw["align_corners"])


@rule("affine_grid_generator")
def _affine_grid(name, kw):
    return F.affine_grid(kw["theta"], kw["size"], align_corners=kw["align_corners"])
