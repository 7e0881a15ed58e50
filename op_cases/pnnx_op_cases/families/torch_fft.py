"""torch.*: the `fft` family (emit/*/families/fft.py): fft.fft, fft.fft2, fft.fftn, fft.hfft,
fft.hfft2, fft.hfftn, fft.ifft, fft.ifft2, fft.ifftn, fft.ihfft, fft.ihfft2, fft.ihfftn,
fft.irfft, fft.irfft2, fft.irfftn, fft.rfft, fft.rfft2, fft.rfftn."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


_FFT_TOL = (1e-4, 1e-4, "FFT butterflies accumulate rounding in an implementation-defined order")


_REAL_ONLY = {"rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"}


def _fft1(name: str):
    fn = f"torch.fft.{name}"
    rows = [
        ("r2_last", f"{fn}(x0)", [f(4, 16)]),
        ("n_pad", f"{fn}(x0, n=20)", [f(2, 13)]),
        ("n_trunc_d0", f"{fn}(x0, n=5, dim=0)", [f(8, 3)]),
        ("ortho_d1", f"{fn}(x0, dim=1, norm='ortho')", [f(1, 12, 4)]),
        ("forward_norm_r1", f"{fn}(x0, norm='forward')", [f(16)]),
        ("abs", f"{fn}(x0).abs()", [f(2, 3, 8)]),
    ]
    if name not in _REAL_ONLY:
        rows.append(("complex_input", f"{fn}(torch.complex(x0, x1))", [f(3, 8), f(3, 8)]))
    return table(fn, rows, tol=_FFT_TOL)


def _fft2(name: str):
    fn = f"torch.fft.{name}"
    rows = [
        ("r2", f"{fn}(x0)", [f(8, 6)]),
        ("r4_b2", f"{fn}(x0)", [f(2, 3, 8, 8)]),
        ("s_pad", f"{fn}(x0, s=(10, 12))", [f(1, 8, 8)]),
        ("dims01_ortho", f"{fn}(x0, dim=(0, 1), norm='ortho')", [f(6, 4, 3)]),
        ("forward_norm", f"{fn}(x0, norm='forward')", [f(4, 13)]),
        ("abs", f"{fn}(x0).abs()", [f(1, 4, 6)]),
    ]
    if name not in _REAL_ONLY:
        rows.append(("complex_input", f"{fn}(torch.complex(x0, x1))", [f(4, 8), f(4, 8)]))
    return table(fn, rows, tol=_FFT_TOL)


def _fftn(name: str):
    fn = f"torch.fft.{name}"
    rows = [
        ("r3_all", f"{fn}(x0)", [f(4, 6, 8)]),
        ("dim_last2", f"{fn}(x0, dim=(-2, -1))", [f(2, 3, 8, 8)]),
        ("s_dim", f"{fn}(x0, s=(6, 10), dim=(1, 2))", [f(1, 4, 8)]),
        ("dim1_ortho", f"{fn}(x0, dim=[1], norm='ortho')", [f(3, 13)]),
        ("forward_norm_r1", f"{fn}(x0, norm='forward')", [f(16)]),
        ("abs", f"{fn}(x0).abs()", [f(2, 4, 6)]),
    ]
    if name not in _REAL_ONLY:
        rows.append(("complex_input", f"{fn}(torch.complex(x0, x1))", [f(2, 4, 8), f(2, 4, 8)]))
    return table(fn, rows, tol=_FFT_TOL)


_BASES = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")


@family("torch.fft.fft", "torch.fft.ifft", "torch.fft.rfft", "torch.fft.irfft", "torch.fft.hfft",
        "torch.fft.ihfft")
def ffts_1d():
    for base in _BASES:
        yield from _fft1(base)


@family("torch.fft.fft2", "torch.fft.ifft2", "torch.fft.rfft2", "torch.fft.irfft2", "torch.fft.hfft2",
        "torch.fft.ihfft2")
def ffts_2d():
    for base in _BASES:
        yield from _fft2(base + "2")


@family("torch.fft.fftn", "torch.fft.ifftn", "torch.fft.rfftn", "torch.fft.irfftn", "torch.fft.hfftn",
        "torch.fft.ihfftn")
def ffts_nd():
    for base in _BASES:
        yield from _fftn(base + "n")
