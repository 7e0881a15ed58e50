"""DFT -> `torch.fft.fft` / `ifft` / `rfft` / `irfft` on the signal axis. ONNX carries complex values as a
trailing axis of (real, imaginary) pairs (1 for a real input), so the input goes through
`torch.view_as_complex` and the result through `torch.view_as_real`."""
from __future__ import annotations

import torch

from .operands import axis
from .registry import RULES

rule = RULES.register


@rule("DFT", produces=(
      "Tensor.narrow", "Tensor.squeeze", "Tensor.unsqueeze", "torch.fft.fft", "torch.fft.ifft",
      "torch.fft.irfft", "torch.fft.rfft", "torch.view_as_complex", "torch.view_as_real"))
def dft(ctx):
    x = ctx.tensor(0)
    pairs = int(x.shape[-1])
    if pairs not in (1, 2):
        ctx.fail(f"DFT input's last axis must be 1 (real) or 2 (complex), not {pairs}")
    if ctx.opset >= 20:
        a = int(ctx.scalar(2, "axis")) if ctx.has(2) else -2
    else:
        a = int(ctx.attr("axis", 1))
    a = axis(a, x.dim())
    if a == x.dim() - 1:
        ctx.fail("DFT over the (real, imaginary) axis")
    n = int(ctx.scalar(1, "dft_length")) if ctx.has(1) else None
    signal = torch.view_as_complex(x.contiguous()) if pairs == 2 else x.squeeze(-1)
    inverse, onesided = int(ctx.attr("inverse", 0)), int(ctx.attr("onesided", 0))
    if inverse and onesided:  # half a spectrum back to a real signal, of even length by default
        return torch.fft.irfft(signal, n=n, dim=a).unsqueeze(-1)
    if inverse:
        y = torch.fft.ifft(signal, n=n, dim=a)
    elif onesided and pairs == 1:
        y = torch.fft.rfft(signal, n=n, dim=a)
    else:
        y = torch.fft.fft(signal, n=n, dim=a)
        if onesided:
            y = y.narrow(a, 0, int(y.shape[a]) // 2 + 1)
    return torch.view_as_real(y)
