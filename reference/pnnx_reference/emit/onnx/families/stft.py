"""torch.stft with ONNX STFT, torch.istft as an inverse real DFT per frame (one MatMul, the
window folded in), overlap-add (ConvTranspose with an identity kernel, stride hop_length) and
division by the summed squared window, as torch computes it.

The complex spectrum is carried as a real tensor with a trailing (real, imaginary) axis of 2
(see fft.py); torch's (..., freqs, frames) order is kept, ONNX STFT's (batch, frames, freqs)
is transposed into it. The window must be a constant: istft's normalisation is computed here
from its values, and stft reads it unrounded (a weight would be stored in fp16)."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..dtypes import COMPLEX_PARTS
from ..registry import COMPLEX_LOWERINGS

PAD_MODES = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


class _Frames:
    """The framing torch.stft / istft share: n_fft, hop, the window padded to n_fft."""

    def __init__(self, op):
        self.n_fft = int(op.params["n_fft"])
        hop = op.params.get("hop_length")
        self.hop = self.n_fft // 4 if hop is None else int(hop)
        win_length = op.params.get("win_length")
        win_length = self.n_fft if win_length is None else int(win_length)
        if not 0 < win_length <= self.n_fft:
            raise Unsupported(f"win_length {win_length} outside 1..n_fft ({self.n_fft})")
        window = _window_values(op, win_length)
        left = (self.n_fft - win_length) // 2
        self.window = np.pad(window, (left, self.n_fft - win_length - left))
        self.center = bool(op.params.get("center", True))
        self.normalized = bool(op.params.get("normalized", False))


def _window_values(op, win_length: int) -> np.ndarray:
    if len(op.inputs) < 2:
        return np.ones(win_length)  # torch's default: a rectangular window
    producer = op.inputs[1].producer
    if producer is None or producer.type != "pnnx.Attribute" or not producer.attrs:
        raise Unsupported("the window is not a constant")
    values = next(iter(producer.attrs.values())).to_numpy().astype(np.float64).reshape(-1)
    if values.size != win_length:
        raise Unsupported(f"window of {values.size} values, win_length is {win_length}")
    return values


def _static_shape(ctx, operand) -> list[int]:
    shape = list(ctx.shape(operand))
    if any(d < 0 for d in shape) or len(shape) not in (1, 2, 3):
        raise Unsupported(f"needs a static input shape of rank 1 or 2 (got {shape})")
    return shape


@COMPLEX_LOWERINGS.register("torch.stft", unbatched_rank=1)  # a 1-D signal: a batch of one
def stft(ctx, op):
    x = op.inputs[0]
    if x.dtype in COMPLEX_PARTS or x.dtype not in ("f32", "f64"):
        raise Unsupported(f"stft of a {x.dtype} signal (real float signals only)")
    if op.params.get("align_to_window"):
        raise Unsupported("align_to_window=True")
    shape, f = _static_shape(ctx, x), _Frames(op)
    if len(shape) != 2:
        raise Unsupported(f"stft of a rank-{len(shape)} input")
    signal = x.name
    if f.center:
        signal = _center_pad(ctx, signal, f.n_fft // 2, op.params.get("pad_mode") or "reflect")
    signal = ctx.node("Unsqueeze", [signal, ctx.const([-1], hint="axes")])
    onesided = op.params.get("onesided")
    spec = ctx.node("STFT", [signal, ctx.const(f.hop, hint="frame_step"), ctx.const(f.window, x.dtype, "window"),
                           ctx.const(f.n_fft, hint="frame_length")], onesided=int(onesided is None or bool(onesided)))
    spec = ctx.node("Transpose", [spec], perm=[0, 2, 1, 3])  # (batch, freqs, frames, 2), as torch
    if f.normalized:
        spec = ctx.node("Mul", [spec, ctx.const(1.0 / math.sqrt(f.n_fft), x.dtype, "norm")])
    ctx.node("Identity", [spec], ctx.y(op))


def _center_pad(ctx, x: str, pad: int, mode: str) -> str:
    if mode not in PAD_MODES:
        raise Unsupported(f"pad_mode={mode!r}")
    return ctx.node("Pad", [x, ctx.const([0, pad, 0, pad], hint="pads")], mode=PAD_MODES[mode])


@COMPLEX_LOWERINGS.register("torch.istft", unbatched_rank=2)  # (freqs, frames): a batch of one
def istft(ctx, op):
    spec = op.inputs[0]
    if spec.dtype not in COMPLEX_PARTS:
        raise Unsupported(f"istft of a {spec.dtype} input (a complex spectrum is expected)")
    if op.params.get("return_complex"):
        raise Unsupported("return_complex=True (a complex signal)")
    shape, f = _static_shape(ctx, spec), _Frames(op)
    dtype = COMPLEX_PARTS[spec.dtype]
    if len(shape) != 3:
        raise Unsupported(f"istft of a rank-{len(shape)} spectrum")
    freqs, frames = shape[-2:]
    if freqs not in (f.n_fft // 2 + 1, f.n_fft):
        raise Unsupported(f"{freqs} frequency bins for n_fft {f.n_fft}")
    x = ctx.node("Transpose", [spec.name], perm=[0, 2, 3, 1])  # (batch, frames, 2, freqs)
    x = ctx.node("Reshape", [x, ctx.const([0, frames, 2 * freqs], hint="shape")])
    x = ctx.node("MatMul", [x, ctx.const(_inverse_dft(f, freqs), dtype, "idft")])  # windowed frames
    x = ctx.node("Transpose", [x], perm=[0, 2, 1])
    eye = np.eye(f.n_fft).reshape(f.n_fft, 1, f.n_fft)
    x = ctx.node("ConvTranspose", [x, ctx.const(eye, dtype, "overlap_add")], strides=[f.hop])
    x = ctx.node("Squeeze", [x, ctx.const([1], hint="axes")])
    ctx.node("Identity", [_trim_and_normalise(ctx, op, f, x, frames, dtype)], ctx.y(op))


def _inverse_dft(f: _Frames, freqs: int) -> np.ndarray:
    """(2 * freqs, n_fft): [real; imag] of the bins -> the windowed real inverse DFT, as
    torch's irfft (bins above n_fft/2 of a two-sided spectrum are ignored, like torch)."""
    n = f.n_fft
    half = n // 2 + 1
    k = np.arange(n)
    bins = np.arange(half)[:, None]
    weight = np.where((bins == 0) | (2 * bins == n), 1.0, 2.0)  # the conjugate half counted twice
    angle = 2 * np.pi * bins * k / n
    scale = 1.0 / math.sqrt(n) if f.normalized else 1.0 / n
    m = np.zeros((2 * freqs, n))
    m[:half] = weight * np.cos(angle)
    m[freqs:freqs + half] = -weight * np.sin(angle)
    return m * scale * f.window


def _trim_and_normalise(ctx, op, f: _Frames, x: str, frames: int, dtype: str) -> str:
    """Divide by the summed squared window, drop the centre padding, fit to `length`."""
    total = f.n_fft + f.hop * (frames - 1)
    envelope = np.zeros(total)
    for t in range(frames):
        envelope[t * f.hop:t * f.hop + f.n_fft] += f.window ** 2
    start = f.n_fft // 2 if f.center else 0
    length = op.params.get("length")
    end = total - start if length is None else start + int(length)
    stop = min(end, total)
    if np.min(envelope[start:stop], initial=1.0) < 1e-11:
        raise Unsupported("the window overlap-add is zero somewhere (torch refuses this istft too)")
    x = ctx.node("Slice", [x, ctx.const([start], hint="starts"), ctx.const([stop], hint="ends"),
                           ctx.const([-1], hint="axes")])
    x = ctx.node("Div", [x, ctx.const(envelope[start:stop], dtype, "window_envelope")])
    if end > stop:  # torch zero-extends to `length`
        x = ctx.node("Pad", [x, ctx.const([0, 0, 0, end - stop], hint="pads")])
    return x
