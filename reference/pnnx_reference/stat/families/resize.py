"""Resizing: interpolation weights per output element by mode; sampling copies."""
from __future__ import annotations

from ..registry import Count, moved, output, rule

_PER_OUTPUT = {"nearest": 0, "nearest-exact": 0, "area": 0, "linear": 5, "bilinear": 11, "bicubic": 35,
               "trilinear": 31}


@rule("F.interpolate", "F.upsample", "nn.Upsample")
def _interpolate(op) -> Count:
    return Count(_PER_OUTPUT.get(op.params.get("mode", "nearest"), 0) * output(op), moved(op))


@rule("F.upsample_bilinear", "nn.UpsamplingBilinear2d")
def _bilinear(op) -> Count:
    return Count(11 * output(op), moved(op))


@rule("F.upsample_nearest", "nn.UpsamplingNearest2d", "F.grid_sample", "F.affine_grid")
def _copied(op) -> Count:
    return Count(0, moved(op))
