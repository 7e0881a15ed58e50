"""torch.fft.* with ONNX DFT (opset 20 form: dft_length and axis as inputs).

A complex tensor is carried as a real one with a trailing axis of 2 (real, imaginary), the
layout DFT reads and writes; graph inputs/outputs that are complex are named in the model's
metadata (export.py). ONNX DFT leaves the forward transform unscaled and scales the inverse by
1/n; torch's `norm` is met with one Mul of the remaining factor.

c2r transforms (irfft*, hfft*) complete the Hermitian spectrum (X[n-k] = conj X[k]) and take
the real part of the inverse DFT; hfft/ihfft are irfft/rfft of the conjugate with the norm
direction swapped, as in torch."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..builder import axis as norm_axis
from ..dtypes import COMPLEX_PARTS
from ..registry import COMPLEX_LOWERINGS, LOWERINGS

_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class _Signal:
    """An operand being transformed: ONNX value, torch shape (without the trailing 2), parts'
    dtype, and whether the value already has the trailing (real, imaginary) axis."""

    def __init__(self, ctx, operand):
        self.shape = list(ctx.shape(operand))
        if any(d < 0 for d in self.shape):
            raise Unsupported("needs a static input shape")
        self.is_complex = operand.dtype in COMPLEX_PARTS
        self.dtype = COMPLEX_PARTS.get(operand.dtype, operand.dtype)
        if self.dtype not in ("f32", "f64"):
            raise Unsupported(f"FFT of a {operand.dtype} tensor")
        self.name = operand.name


def _as_pairs(ctx, s: _Signal) -> str:
    """The signal with its trailing (real, imaginary) axis; a real one gets imaginary 0."""
    if s.is_complex:
        return s.name
    rank = len(s.shape) + 1
    pads = ctx.const([0] * rank + [0] * (rank - 1) + [1], hint="pads")
    return ctx.node("Pad", [ctx.node("Unsqueeze", [s.name, ctx.const([-1], hint="axes")]), pads])


def _dft(ctx, s: _Signal, x: str, axis: int, n: int, inverse: bool, onesided: bool = False) -> str:
    """One DFT along torch axis `axis`, zero-padded or truncated to n; updates s."""
    y = ctx.node("DFT", [x, ctx.const(n, hint="dft_length"), ctx.const(axis, hint="axis")],
               inverse=int(inverse), onesided=int(onesided))
    s.shape[axis] = n // 2 + 1 if onesided else n
    s.is_complex = True
    return y


def _norm_factor(norm: str | None, n: int, inverse: bool) -> float:
    """torch's scale over ONNX's for one axis of signal length n."""
    norm = norm or "backward"
    if norm not in _SWAPPED:
        raise Unsupported(f"norm={norm!r}")
    torch_scale = {"backward": 1.0 / n if inverse else 1.0,
                   "forward": 1.0 if inverse else 1.0 / n, "ortho": 1.0 / math.sqrt(n)}[norm]
    return torch_scale / (1.0 / n if inverse else 1.0)


def _scaled(ctx, s: _Signal, x: str, factor: float) -> str:
    if factor == 1.0:
        return x
    return ctx.node("Mul", [x, ctx.const(factor, s.dtype, "norm")])


def _conj(ctx, s: _Signal, x: str) -> str:
    return ctx.node("Mul", [x, ctx.const([1.0, -1.0], s.dtype, "conj")])


def _axes_and_sizes(op, s: _Signal, single: bool) -> tuple[list[int], list[int | None]]:
    """The transformed axes (non-negative) and their requested lengths (None: unchanged)."""
    rank = len(s.shape)
    if single:
        dims, sizes = [op.params.get("dim", -1)], [op.params.get("n")]
    else:
        sizes = op.params.get("s")
        dims = op.params.get("dim")
        if dims is None:
            dims = list(range(rank)) if sizes is None else list(range(rank - len(sizes), rank))
        dims = [dims] if isinstance(dims, int) else list(dims)
        sizes = [None] * len(dims) if sizes is None else list(sizes)
    if len(sizes) != len(dims):
        raise Unsupported("s and dim of different lengths")
    axes = [norm_axis(int(d), rank) for d in dims]
    if len(set(axes)) != len(axes):
        raise Unsupported("repeated dims")
    return axes, [None if n is None or int(n) == -1 else int(n) for n in sizes]


def _c2c(ctx, s: _Signal, x: str, axes, sizes, inverse: bool, norm) -> tuple[str, float]:
    """Complex DFTs along `axes`; (value, accumulated norm factor)."""
    factor = 1.0
    for a, n in zip(axes, sizes):
        n = s.shape[a] if n is None else n
        x = _dft(ctx, s, x, a, n, inverse)
        factor *= _norm_factor(norm, n, inverse)
    return x, factor


def _real_to_half(ctx, s: _Signal, axes, sizes, norm) -> tuple[str, float]:
    """rfftn: the one-sided DFT on the last axis, then complex DFTs on the others."""
    if s.is_complex:
        raise Unsupported("rfft of a complex tensor")
    last, n = axes[-1], sizes[-1] if sizes[-1] is not None else s.shape[axes[-1]]
    x = ctx.node("Unsqueeze", [s.name, ctx.const([-1], hint="axes")])
    x = _dft(ctx, s, x, last, n, inverse=False, onesided=True)
    x, factor = _c2c(ctx, s, x, axes[:-1], sizes[:-1], False, norm)
    return x, factor * _norm_factor(norm, n, False)


def _hermitian_full(ctx, s: _Signal, x: str, axis: int, n: int) -> str:
    """The length-n spectrum along `axis` from its first n//2+1 entries (zero-padded or cut)."""
    half = n // 2 + 1
    have = s.shape[axis]
    if have < half:
        rank = len(s.shape) + 1
        pads = [0] * rank * 2
        pads[rank + axis] = half - have
        x = ctx.node("Pad", [x, ctx.const(pads, hint="pads")])
    source = np.array([k if k < half else n - k for k in range(n)], np.int64)
    x = ctx.node("Gather", [x, ctx.const(source, hint="hermitian")], axis=axis)
    signs = np.ones((n,) + (1,) * (len(s.shape) - axis - 1) + (2,))
    signs[half:, ..., 1] = -1.0                     # the mirrored half is conjugated
    s.shape[axis] = n
    return ctx.node("Mul", [x, ctx.const(signs, s.dtype, "hermitian_sign")])


def _half_to_real(ctx, op, s: _Signal, x: str, axes, sizes, norm) -> None:
    """irfftn: complex inverse DFTs on all but the last axis, then the c2r one; real part."""
    x, factor = _c2c(ctx, s, x, axes[:-1], sizes[:-1], True, norm)
    last = axes[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (s.shape[last] - 1)
    if n < 1:
        raise Unsupported("c2r output length below 1")
    x = _dft(ctx, s, _hermitian_full(ctx, s, x, last, n), last, n, inverse=True)
    x = _scaled(ctx, s, x, factor * _norm_factor(norm, n, True))
    ctx.node("Gather", [x, ctx.const(0, hint="real")], ctx.y(op), axis=-1)


def _finish(ctx, op, s: _Signal, x: str, factor: float, conj: bool = False) -> None:
    x = _scaled(ctx, s, x, factor)
    if conj:
        x = _conj(ctx, s, x)
    ctx.node("Identity", [x], ctx.y(op))


def _c2c_op(inverse: bool, single: bool):
    def lower(ctx, op):
        s = _Signal(ctx, op.inputs[0])
        axes, sizes = _axes_and_sizes(op, s, single)
        x, factor = _c2c(ctx, s, _as_pairs(ctx, s), axes, sizes, inverse, op.params.get("norm"))
        _finish(ctx, op, s, x, factor)
    return lower


def _half_spectrum_setup(ctx, op, single: bool, hermitian: bool):
    """(signal, axes, sizes, norm) of a real<->half-spectrum transform; the hermitian forms
    (ihfft*, hfft*) run the plain one with the norm direction swapped."""
    s = _Signal(ctx, op.inputs[0])
    axes, sizes = _axes_and_sizes(op, s, single)
    norm = op.params.get("norm") or "backward"
    return s, axes, sizes, _SWAPPED.get(norm, norm) if hermitian else norm


def _r2c_op(single: bool, hermitian: bool):
    """rfft* (hermitian=False) and ihfft* = conj(rfft*) with the norm direction swapped."""
    def lower(ctx, op):
        s, axes, sizes, norm = _half_spectrum_setup(ctx, op, single, hermitian)
        x, factor = _real_to_half(ctx, s, axes, sizes, norm)
        _finish(ctx, op, s, x, factor, conj=hermitian)
    return lower


def _c2r_op(single: bool, hermitian: bool):
    """irfft* (hermitian=False) and hfft* = irfft* of the conjugate, norm direction swapped."""
    def lower(ctx, op):
        s, axes, sizes, norm = _half_spectrum_setup(ctx, op, single, hermitian)
        x = _as_pairs(ctx, s)
        _half_to_real(ctx, op, s, _conj(ctx, s, x) if hermitian else x, axes, sizes, norm)
    return lower


for _name, _fn in {"fft": _c2c_op(False, True), "ifft": _c2c_op(True, True),
                   "fft2": _c2c_op(False, False), "ifft2": _c2c_op(True, False),
                   "fftn": _c2c_op(False, False), "ifftn": _c2c_op(True, False),
                   "rfft": _r2c_op(True, False), "rfft2": _r2c_op(False, False),
                   "rfftn": _r2c_op(False, False), "ihfft": _r2c_op(True, True),
                   "ihfft2": _r2c_op(False, True), "ihfftn": _r2c_op(False, True)}.items():
    COMPLEX_LOWERINGS.register(f"torch.fft.{_name}")(_fn)


# c2r transforms of a real input (read as complex with imaginary 0) touch no complex operand
for _name, _fn in {"irfft": _c2r_op(True, False), "irfft2": _c2r_op(False, False),
                   "irfftn": _c2r_op(False, False), "hfft": _c2r_op(True, True),
                   "hfft2": _c2r_op(False, True), "hfftn": _c2r_op(False, True)}.items():
    COMPLEX_LOWERINGS.register(f"torch.fft.{_name}")(_fn)
    LOWERINGS.register(f"torch.fft.{_name}")(_fn)
