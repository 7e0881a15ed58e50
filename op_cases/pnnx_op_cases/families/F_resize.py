"""F.*: the `resize` family (emit/*/families/resize.py): affine_grid, grid_sample, interpolate,
upsample, upsample_bilinear, upsample_nearest."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


_LINEAR_TOL = (1e-5, 1e-5, "interpolation weights are computed in float; runtimes round differently")


@family("F.interpolate")
def _interpolate():
    rows = [
        ("nearest_s2_r4", "F.interpolate(x0, scale_factor=2.0, mode='nearest')", [f(1, 3, 5, 6)]),
        ("nearest_size_r3", "F.interpolate(x0, size=13)", [f(2, 4, 7)]),
        ("nearest_size_r5", "F.interpolate(x0, size=(4, 6, 5), mode='nearest')", [f(1, 2, 2, 3, 4)]),
        ("nearest_s2x3", "F.interpolate(x0, scale_factor=(2.0, 3.0))", [f(1, 8, 4, 4)]),
        ("nearest_down_s0p5", "F.interpolate(x0, scale_factor=0.5)", [f(1, 3, 8, 10)]),
        ("nearest_exact_size", "F.interpolate(x0, size=(7, 9), mode='nearest-exact')", [f(1, 3, 5, 6)]),
        ("linear_s2", "F.interpolate(x0, scale_factor=2.0, mode='linear')", [f(1, 4, 9)]),
        ("linear_size_ac", "F.interpolate(x0, size=15, mode='linear', align_corners=True)", [f(2, 3, 8)]),
        ("bilinear_s2", "F.interpolate(x0, scale_factor=2.0, mode='bilinear')", [f(1, 3, 5, 6)]),
        ("bilinear_size_ac_c13", "F.interpolate(x0, size=(9, 11), mode='bilinear', align_corners=True)",
         [f(1, 13, 4, 5)]),
        ("bilinear_down", "F.interpolate(x0, size=(3, 5), mode='bilinear')", [f(2, 8, 8, 9)]),
        ("bilinear_antialias", "F.interpolate(x0, scale_factor=0.5, mode='bilinear', antialias=True)",
         [f(1, 3, 12, 10)]),
        ("bilinear_recompute", "F.interpolate(x0, scale_factor=1.7, mode='bilinear', recompute_scale_factor=True)",
         [f(1, 4, 6, 6)]),
        ("bicubic_s2", "F.interpolate(x0, scale_factor=2.0, mode='bicubic')", [f(1, 3, 5, 6)]),
        ("bicubic_size_ac", "F.interpolate(x0, size=(7, 8), mode='bicubic', align_corners=True)", [f(1, 16, 4, 4)]),
        ("trilinear_s2", "F.interpolate(x0, scale_factor=2.0, mode='trilinear')", [f(1, 2, 3, 4, 3)]),
        ("trilinear_size_ac", "F.interpolate(x0, size=(4, 5, 6), mode='trilinear', align_corners=True)",
         [f(1, 4, 2, 3, 3)]),
        ("area_r4", "F.interpolate(x0, size=(3, 4), mode='area')", [f(1, 3, 9, 8)]),
        ("area_r3", "F.interpolate(x0, size=5, mode='area')", [f(2, 4, 12)]),
        ("noncontig", "x = x0.transpose(2, 3)\nF.interpolate(x, scale_factor=2.0, mode='bilinear')", [f(1, 3, 4, 6)]),
    ]
    return table("F.interpolate", rows, tol=_LINEAR_TOL)


def _upsample_rows(fn: str, modes: bool) -> list[tuple]:
    rows = [
        ("s2_r4", f"{fn}(x0, scale_factor=2)", [f(1, 3, 5, 6)]),
        ("size_c13", f"{fn}(x0, size=(7, 9))", [f(2, 13, 4, 5)]),
        ("s3_c16", f"{fn}(x0, scale_factor=3)", [f(1, 16, 3, 3)]),
        ("size_int", f"{fn}(x0, size=10)", [f(1, 4, 5, 5)]),
        ("s2x1", f"{fn}(x0, scale_factor=(2, 1))", [f(1, 8, 4, 6)]),
    ]
    if modes:
        rows += [
            ("linear_r3", f"{fn}(x0, scale_factor=2, mode='linear')", [f(1, 3, 7)]),
            ("bilinear_ac", f"{fn}(x0, size=(8, 8), mode='bilinear', align_corners=True)", [f(1, 3, 5, 6)]),
            ("bicubic", f"{fn}(x0, scale_factor=2, mode='bicubic')", [f(1, 3, 4, 4)]),
            ("trilinear", f"{fn}(x0, scale_factor=2, mode='trilinear')", [f(1, 2, 2, 3, 3)]),
            ("nearest_r5", f"{fn}(x0, scale_factor=2)", [f(1, 2, 2, 3, 3)]),
        ]
    return rows


family("F.upsample")(lambda: table("F.upsample", _upsample_rows("F.upsample", True), tol=_LINEAR_TOL))


family("F.upsample_nearest")(lambda: table("F.upsample_nearest", _upsample_rows("F.upsample_nearest", False)))


family("F.upsample_bilinear")(lambda: table("F.upsample_bilinear", _upsample_rows("F.upsample_bilinear", False),
                                            tol=_LINEAR_TOL))


@family("F.grid_sample")
def _grid_sample():
    def gs(name, x, grid, kwargs):
        return (name, f"F.grid_sample(x0, x1{', ' + kwargs if kwargs else ''})", [x, grid])
    g4 = f(1, 5, 7, 2, low=-1.2, high=1.2)
    rows = [
        gs("bilinear_zeros", f(1, 3, 6, 8), g4, "align_corners=False"),
        gs("bilinear_border_ac", f(1, 13, 6, 8), g4, "padding_mode='border', align_corners=True"),
        gs("nearest_reflection", f(1, 4, 6, 8), g4, "mode='nearest', padding_mode='reflection', align_corners=False"),
        gs("bicubic_zeros", f(1, 3, 6, 8), g4, "mode='bicubic', align_corners=False"),
        gs("bicubic_border_ac", f(1, 8, 5, 5), g4, "mode='bicubic', padding_mode='border', align_corners=True"),
        gs("nearest_zeros_ac", f(1, 16, 6, 8), g4, "mode='nearest', align_corners=True"),
        gs("bilinear_reflection_ac_b2", f(2, 3, 6, 8), f(2, 4, 4, 2, low=-1.5, high=1.5),
           "padding_mode='reflection', align_corners=True"),
        gs("r5_bilinear", f(1, 3, 4, 5, 6), f(1, 2, 3, 4, 3, low=-1.1, high=1.1), "align_corners=False"),
        gs("r5_nearest_border", f(1, 4, 4, 5, 6), f(1, 2, 3, 4, 3, low=-1.1, high=1.1),
           "mode='nearest', padding_mode='border', align_corners=False"),
    ]
    return table("F.grid_sample", rows, tol=(1e-5, 1e-5, "bilinear/bicubic weights from float grid coordinates"))


@family("F.affine_grid")
def _affine_grid():
    rows = [
        ("r4_size", "F.affine_grid(x0, [1, 3, 5, 7], align_corners=False)", [f(1, 2, 3)]),
        ("r4_ac_b2", "F.affine_grid(x0, [2, 4, 6, 6], align_corners=True)", [f(2, 2, 3)]),
        ("r5_size", "F.affine_grid(x0, [1, 2, 3, 4, 5], align_corners=False)", [f(1, 3, 4)]),
        ("r5_ac", "F.affine_grid(x0, [2, 1, 2, 3, 3], align_corners=True)", [f(2, 3, 4)]),
        ("r4_then_sample", "g = F.affine_grid(x1, list(x0.shape), align_corners=False)\n"
         "F.grid_sample(x0, g, align_corners=False)", [f(1, 3, 6, 8), f(1, 2, 3, low=-0.8, high=0.8)]),
    ]
    return table("F.affine_grid", rows)
