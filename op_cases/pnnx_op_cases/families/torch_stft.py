"""torch.*: the `stft` family (emit/*/families/stft.py): istft, stft."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


_FFT_TOL = (1e-4, 1e-4, "FFT butterflies accumulate rounding in an implementation-defined order")


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
