"""nn.Upsample (every mode) and the UpsamplingBilinear2d / UpsamplingNearest2d aliases."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

# mode -> input rank it accepts (spatial dims), and whether align_corners applies
MODES = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,), "bilinear": (2,),
         "bicubic": (2,), "trilinear": (3,)}
ALIGNABLE = {"linear", "bilinear", "bicubic", "trilinear"}
SPATIAL = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}


def _mode_name(mode):
    return mode.replace("-", "_")


@family("nn.Upsample")
def upsample():
    op = "nn.Upsample"
    for mode, ranks in MODES.items():
        m = _mode_name(mode)
        for nd in ranks:
            x = rand(1, 3, *SPATIAL[nd])
            smoke = mode in ("nearest", "bilinear") and nd == 2
            yield module_case(op, f"{m}_{nd}d_x2", f"nn.Upsample(scale_factor=2, mode={mode!r})",
                              [x], smoke=smoke)
            size = tuple(s * 2 + 1 for s in SPATIAL[nd])
            yield module_case(op, f"{m}_{nd}d_size", f"nn.Upsample(size={size}, mode={mode!r})", [x])
            yield module_case(op, f"{m}_{nd}d_x1.5",
                              f"nn.Upsample(scale_factor=1.5, mode={mode!r})", [x])
            yield module_case(op, f"{m}_{nd}d_down",
                              f"nn.Upsample(size={tuple(max(1, s // 2) for s in SPATIAL[nd])}, "
                              f"mode={mode!r})", [x])
            if nd >= 2:
                sf = (2.0,) + (3.0,) * (nd - 1)
                yield module_case(op, f"{m}_{nd}d_x2x3", f"nn.Upsample(scale_factor={sf}, mode={mode!r})",
                                  [x])
            if mode in ALIGNABLE:
                yield module_case(op, f"{m}_{nd}d_x2_align",
                                  f"nn.Upsample(scale_factor=2, mode={mode!r}, align_corners=True)", [x])
                yield module_case(op, f"{m}_{nd}d_size_align",
                                  f"nn.Upsample(size={size}, mode={mode!r}, align_corners=True)", [x])
                yield module_case(op, f"{m}_{nd}d_x1.5_recompute",
                                  f"nn.Upsample(scale_factor=1.5, mode={mode!r}, "
                                  "recompute_scale_factor=True)", [x])
    yield module_case(op, "nearest_2d_b2_c13", "nn.Upsample(scale_factor=2)", [rand(2, 13, 3, 4)])
    yield module_case(op, "bilinear_2d_noncontiguous", "nn.Upsample(scale_factor=2, mode='bilinear')",
                      [rand(1, 3, 6, 5)], pre="x0 = x0.transpose(2, 3)")


@family("nn.UpsamplingBilinear2d", "nn.UpsamplingNearest2d")
def upsampling_aliases():
    for op in ("nn.UpsamplingBilinear2d", "nn.UpsamplingNearest2d"):
        x = rand(1, 3, 5, 6)
        yield module_case(op, "x2", f"{op}(scale_factor=2)", [x], smoke=True)
        yield module_case(op, "size", f"{op}(size=(9, 7))", [x])
        yield module_case(op, "size_int", f"{op}(size=8)", [x])
        yield module_case(op, "x3_b2_c8", f"{op}(scale_factor=3)", [rand(2, 8, 2, 3)])
        yield module_case(op, "x2x3", f"{op}(scale_factor=(2, 3))", [x])
