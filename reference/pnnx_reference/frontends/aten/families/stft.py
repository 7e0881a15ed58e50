"""Short-time Fourier transforms. aten::stft has no `center`: a traced torch.stft(center=True)
pads the signal itself first (folded back into one call in torchscript/fusions.py)."""
from __future__ import annotations

import torch

from ..registry import rule


@rule("stft")
def _stft(name, kw):
    return torch.stft(kw["self"], kw["n_fft"], hop_length=kw.get("hop_length"), win_length=kw.get("win_length"),
                      window=kw.get("window"), center=kw.get("center", False), pad_mode=kw.get("pad_mode", "reflect"),
                      normalized=kw.get("normalized", False), onesided=kw.get("onesided"),
                      return_complex=kw.get("return_complex"))
