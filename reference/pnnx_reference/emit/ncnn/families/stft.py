"""torch.stft / torch.istft as ncnn Spectrogram / InverseSpectrogram.

A complex operand is carried as a real blob with a trailing (real, imaginary) axis of 2, the
layout Spectrogram writes ((freqs, frames, 2)) and InverseSpectrogram reads (see
complex_blobs.py). Both layers transform one 1-d signal and compute their window themselves
(rectangular, periodic hann or periodic hamming, zero-padded to n_fft in the middle as torch
pads it); a batch of signals is split into rows and concatenated back."""
from __future__ import annotations

import numpy as np
import torch

from ....errors import Unsupported
from ..complex_blobs import COMPLEX, magnitude_only
from ..context import Context, dims_params, param
from ..registry import LOWERINGS

# ncnn window_type -> torch window of that length
WINDOWS = {
    0: lambda n: torch.ones(n),
    1: lambda n: torch.hann_window(n, periodic=True),
    2: lambda n: torch.hamming_window(n, periodic=True),
}

PAD_TYPES = {"constant": 0, "replicate": 1, "reflect": 2}


# Spectrogram / InverseSpectrogram param ids
N_FFT, POWER_OR_RETURNS, HOPLEN, WINLEN, WINDOW_TYPE, CENTER, PAD_TYPE, NORMALIZED, ONESIDED = range(9)

RETURNS_COMPLEX, RETURNS_REAL = 0, 1


def _window_type(ctx: Context, op, win_length: int) -> int:
    """The ncnn window_type whose values equal the window torch was given."""
    if len(op.inputs) < 2:
        return 0  # no window: torch uses ones(win_length)
    values = ctx.constant(op.inputs[1])
    if values is None:
        raise Unsupported("the window is not a constant: ncnn computes its own (hann, hamming or rectangular)")
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    for kind, make in WINDOWS.items():
        ref = make(win_length).double().numpy()
        if values.shape == ref.shape and _same_window(values, ref):
            return kind
    raise Unsupported(f"the window (length {values.size}) is not a periodic hann, periodic hamming or "
                      "rectangular window, the only ones ncnn Spectrogram computes")


def _same_window(values: np.ndarray, ref: np.ndarray) -> bool:
    """Equal in fp32, or equal to the window rounded to fp16 (weights stored in half precision)."""
    return (np.allclose(values, ref, rtol=0, atol=1e-6)
            or np.allclose(values, ref.astype(np.float16).astype(np.float64), rtol=0, atol=1e-7))


def _common(ctx: Context, op) -> dict[int, int]:
    """The params Spectrogram and InverseSpectrogram share."""
    n_fft = int(param(op, "n_fft"))
    hop = param(op, "hop_length")
    hop = n_fft // 4 if hop is None else int(hop)
    win_length = param(op, "win_length")
    win_length = n_fft if win_length is None else int(win_length)
    if win_length > n_fft:
        raise Unsupported(f"win_length {win_length} > n_fft {n_fft}")
    return {N_FFT: n_fft, HOPLEN: hop, WINLEN: win_length, WINDOW_TYPE: _window_type(ctx, op, win_length),
            CENTER: int(bool(param(op, "center", True))), NORMALIZED: int(bool(param(op, "normalized", False)))}


def _per_signal(ctx: Context, src: str, in_shape: list[int], out_shape: list[int], out_name: str, one) -> None:
    """Apply `one(ctx, src, dst)` (a 1-signal layer) to `src`, whose ncnn shape is `in_shape`;
    when that has one more leading dim than the layer takes, row by row, concatenated back."""
    if len(in_shape) == one.rank:
        one(ctx, src, out_name)
        return
    if len(in_shape) != one.rank + 1 or len(out_shape) > 4:
        raise Unsupported(f"input of ncnn shape {tuple(in_shape)}: only one signal or one batch dim is lowered")
    rows = []
    for b in range(in_shape[0]):
        row, flat, done, back = (ctx.temp(out_name) for _ in range(4))
        ctx.emit("Crop", "signal", [src], [row], {9: [b], 10: [b + 1], 11: [0]})
        ctx.emit("Reshape", "signal", [row], [flat], dims_params(in_shape[1:]))
        one(ctx, flat, done)
        ctx.emit("Reshape", "signal", [done], [back], dims_params([1] + out_shape[1:]))
        rows.append(back)
    ctx.emit("Concat", "signal", rows, [out_name], {0: 0})


def _complex_shape(ctx: Context, operand) -> list[int]:
    return ctx.shape(operand) + [2]


@LOWERINGS.register("torch.stft", batchless=True)
def _stft(ctx: Context, op) -> None:
    x = op.inputs[0]
    if x.dtype in COMPLEX:
        raise Unsupported("complex input: ncnn Spectrogram transforms real signals only")
    if param(op, "align_to_window"):
        raise Unsupported("align_to_window=True has no ncnn Spectrogram equivalent")
    p = _common(ctx, op)
    pad_mode = param(op, "pad_mode", "reflect")
    if p[CENTER] and pad_mode not in PAD_TYPES:
        raise Unsupported(f"pad_mode '{pad_mode}': ncnn Spectrogram pads constant, replicate or reflect")
    onesided = param(op, "onesided")
    out = op.outputs[0]
    magnitude = magnitude_only(out)
    p.update({POWER_OR_RETURNS: int(magnitude), PAD_TYPE: PAD_TYPES.get(pad_mode, 2),
              ONESIDED: 1 if onesided is None else int(bool(onesided))})

    def one(ctx, src, dst):
        ctx.emit("Spectrogram", "stft", [src], [dst], p)
    one.rank = 1
    complex_blob = out.dtype in COMPLEX and not magnitude  # a real result is (..., 2) already
    out_shape = _complex_shape(ctx, out) if complex_blob else ctx.shape(out)
    _per_signal(ctx, ctx.blob(x), ctx.shape(x), out_shape, out.name, one)


@LOWERINGS.register("torch.istft", batchless=True)
def _istft(ctx: Context, op) -> None:
    spec, out = op.inputs[0], op.outputs[0]
    if spec.dtype not in COMPLEX:
        raise Unsupported(f"input of dtype {spec.dtype}: ncnn InverseSpectrogram reads a complex spectrum")
    p = _common(ctx, op)
    returns_complex = bool(param(op, "return_complex", False))
    p[POWER_OR_RETURNS] = RETURNS_COMPLEX if returns_complex else RETURNS_REAL
    in_shape = _complex_shape(ctx, spec)
    length = param(op, "length")

    def one(ctx, src, dst):
        src = _real_half(ctx, src, dst, in_shape[-3], p[N_FFT]) if not returns_complex else src
        if length is None:
            ctx.emit("InverseSpectrogram", "istft", [src], [dst], p)
            return
        # torch keeps `length` samples of the whole overlap-add from the centre offset on
        full = ctx.temp(dst)
        ctx.emit("InverseSpectrogram", "istft", [src], [full], {**p, CENTER: 0})
        total = (in_shape[-2] - 1) * p[HOPLEN] + p[N_FFT]
        start = p[N_FFT] // 2 if p[CENTER] else 0
        _fit_length(ctx, full, dst, start, total, int(length), returns_complex)
    one.rank = 3
    out_shape = _complex_shape(ctx, out) if returns_complex else ctx.shape(out)
    _per_signal(ctx, ctx.blob(spec), in_shape, out_shape, out.name, one)


def _real_half(ctx: Context, src: str, dst: str, freqs: int, n_fft: int) -> str:
    """A real istft of a two-sided spectrum reads its first n_fft/2+1 bins only (torch's irfft),
    where InverseSpectrogram would take the real part of the full inverse DFT."""
    if freqs == n_fft // 2 + 1:
        return src
    half = ctx.temp(dst)
    ctx.emit("Crop", "istft_half", [src], [half], {9: [0], 10: [n_fft // 2 + 1], 11: [0]})
    return half


def _fit_length(ctx: Context, src: str, dst: str, start: int, total: int, length: int, pairs: bool) -> None:
    """Samples [start, start + length) of the `total` ones, zero-extended past the end as torch does."""
    stop = min(start + length, total)
    short = start + length - stop
    cropped = ctx.temp(dst) if short else dst
    ctx.emit("Crop", "istft_length", [src], [cropped], {9: [start], 10: [stop], 11: [0]})
    if not short:
        return
    if pairs:  # (samples, 2): extend the rows
        ctx.emit("Padding", "istft_length", [cropped], [dst], {0: 0, 1: short, 4: 0, 5: 0.0})
    else:
        ctx.emit("Padding", "istft_length", [cropped], [dst], {2: 0, 3: short, 4: 0, 5: 0.0})
