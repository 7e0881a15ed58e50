"""torch.fft.*, torch.stft / istft and the complex-number helpers."""
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


@family("torch.complex")
def _complex():
    return table("torch.complex", [
        ("r2", "torch.complex(x0, x1)", [f(3, 8), f(3, 8)]),
        ("bcast", "torch.complex(x0, x1)", [f(2, 13), f(13)]),
        ("abs", "torch.complex(x0, x1).abs()", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("f64", "torch.complex(x0, x1)", [f(5, dtype="f64"), f(5, dtype="f64")]),
        ("mul_then_real", "(torch.complex(x0, x1) * torch.complex(x1, x0)).real", [f(4, 4), f(4, 4)]),
    ])


def _part(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("of_complex", f"{fn}(torch.complex(x0, x1))", [f(3, 8), f(3, 8)]),
        ("of_fft", f"{fn}(torch.fft.fft(x0))", [f(2, 16)], {"tol": _FFT_TOL}),
        ("of_view_as_complex", f"{fn}(torch.view_as_complex(x0))", [f(4, 13, 2)]),
        ("then_add", f"{fn}(torch.complex(x0, x1)) + x0", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("method", f"torch.complex(x0, x1).{name}", [f(6), f(6)]),
    ] + ([("of_real_tensor", f"{fn}(x0)", [f(2, 5)])] if name == "real" else []))


family("torch.real")(lambda: _part("real"))
family("torch.imag")(lambda: _part("imag"))


@family("torch.view_as_complex")
def _view_as_complex():
    return table("torch.view_as_complex", [
        ("r3", "torch.view_as_complex(x0)", [f(4, 8, 2)]),
        ("r2", "torch.view_as_complex(x0)", [f(13, 2)]),
        ("r4", "torch.view_as_complex(x0)", [f(1, 3, 4, 2)]),
        ("abs", "torch.view_as_complex(x0).abs()", [f(2, 6, 2)]),
        ("rope_like", "torch.view_as_real(torch.view_as_complex(x0) * torch.view_as_complex(x1)).flatten(-2)",
         [f(2, 4, 8, 2), f(4, 8, 2)]),
    ])


@family("torch.view_as_real")
def _view_as_real():
    return table("torch.view_as_real", [
        ("of_complex", "torch.view_as_real(torch.complex(x0, x1))", [f(3, 8), f(3, 8)]),
        ("of_fft", "torch.view_as_real(torch.fft.rfft(x0))", [f(2, 16)], {"tol": _FFT_TOL}),
        ("r1", "torch.view_as_real(torch.complex(x0, x1))", [f(13), f(13)]),
        ("roundtrip", "torch.view_as_real(torch.view_as_complex(x0))", [f(4, 6, 2)]),
        ("then_flatten", "torch.view_as_real(torch.complex(x0, x1)).flatten(1)", [f(2, 5), f(2, 5)]),
    ])


_HANN = "self.register_buffer('win', torch.hann_window({n}))"


@family("torch.stft")
def _stft():
    return table("torch.stft", [
        ("n16_h4_hann", "torch.stft(x0, 16, hop_length=4, window=self.win, return_complex=True)", [f(1, 64)],
         {"init": _HANN.format(n=16)}),
        ("no_window_magnitude", "torch.stft(x0, 32, hop_length=8, return_complex=True).abs()", [f(2, 128)]),
        ("center_false", "torch.stft(x0, 16, 4, window=self.win, center=False, return_complex=True)", [f(1, 80)],
         {"init": _HANN.format(n=16)}),
        ("reflect_normalized", "torch.stft(x0, 16, 8, window=self.win, pad_mode='reflect', normalized=True, "
         "return_complex=True)", [f(2, 64)], {"init": _HANN.format(n=16)}),
        ("twosided", "torch.stft(x0, 12, 3, window=self.win, onesided=False, return_complex=True)", [f(60)],
         {"init": _HANN.format(n=12)}),
        ("win_length", "torch.stft(x0, 16, 4, win_length=12, window=self.win, return_complex=True)", [f(1, 64)],
         {"init": _HANN.format(n=12)}),
        ("as_real", "torch.view_as_real(torch.stft(x0, 16, 4, window=self.win, return_complex=True))",
         [f(1, 48)], {"init": _HANN.format(n=16)}),
    ], tol=_FFT_TOL)


@family("torch.istft")
def _istft():
    spec = "s = torch.stft(x0, {n}, {h}, window=self.win{extra}, return_complex=True)"
    return table("torch.istft", [
        ("roundtrip_n16_h4", spec.format(n=16, h=4, extra="") + "\ntorch.istft(s, 16, 4, window=self.win)",
         [f(1, 64)], {"init": _HANN.format(n=16)}),
        ("length", spec.format(n=16, h=4, extra="") + "\ntorch.istft(s, 16, 4, window=self.win, length=60)",
         [f(2, 64)], {"init": _HANN.format(n=16)}),
        ("normalized", spec.format(n=32, h=8, extra=", normalized=True")
         + "\ntorch.istft(s, 32, 8, window=self.win, normalized=True)", [f(1, 128)], {"init": _HANN.format(n=32)}),
        ("twosided", spec.format(n=16, h=4, extra=", onesided=False")
         + "\ntorch.istft(s, 16, 4, window=self.win, onesided=False)", [f(64)], {"init": _HANN.format(n=16)}),
        ("from_complex_input", "torch.istft(torch.complex(x0, x1), 16, 4, window=self.win)",
         [f(9, 13), f(9, 13)], {"init": _HANN.format(n=16)}),
    ], tol=_FFT_TOL)


@family("torch.quantize_per_tensor")
def _quantize():
    q = "torch.quantize_per_tensor(x0, {s}, {z}, torch.{t})"
    return table("torch.quantize_per_tensor", [
        ("quint8_int_repr", q.format(s=0.05, z=10, t="quint8") + ".int_repr()", [f(1, 3, 8, 8)]),
        ("qint8_dequant", q.format(s=0.02, z=0, t="qint8") + ".dequantize()", [f(2, 13)]),
        ("qint32", q.format(s=0.001, z=0, t="qint32") + ".int_repr()", [f(16)]),
        ("saturate", q.format(s=0.01, z=128, t="quint8") + ".int_repr()", [f(3, 4, low=-5, high=5)]),
        ("zero_point_neg", q.format(s=0.1, z=-20, t="qint8") + ".dequantize()", [f(4, 4)]),
    ])


@family("torch.dequantize")
def _dequantize():
    q = "torch.quantize_per_tensor(x0, {s}, {z}, torch.{t})"
    return table("torch.dequantize", [
        ("quint8", "torch.dequantize(" + q.format(s=0.05, z=10, t="quint8") + ")", [f(1, 3, 8, 8)]),
        ("qint8", "torch.dequantize(" + q.format(s=0.02, z=0, t="qint8") + ")", [f(2, 13)]),
        ("qint32", "torch.dequantize(" + q.format(s=0.001, z=0, t="qint32") + ")", [f(16)]),
        ("method", q.format(s=0.1, z=5, t="quint8") + ".dequantize() + x0", [f(3, 4)]),
        ("saturate", "torch.dequantize(" + q.format(s=0.01, z=128, t="quint8") + ")", [f(3, 4, low=-5, high=5)]),
    ])
