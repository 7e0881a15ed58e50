"""Operators with no ONNX counterpart, rebuilt from elementwise ops and gathers: as_strided
(constant flat indices), pdist (constant row pairs), cumprod (a masked product), lgamma
(Lanczos approximation)."""
from __future__ import annotations

import math

import numpy as np

from ..builder import axis
from ..dtypes import onnx_type
from ..registry import Unsupported, lowering
from .reduce import _accumulator

_MAX_CUMPROD_ELEMENTS = 1 << 24  # the masked copy has L times the input's elements


def _static(b, operand, what: str) -> list[int]:
    shape = b.shape(operand)
    if any(d < 0 for d in shape):
        raise Unsupported(f"needs a static {what} shape")
    return shape


# --- torch.as_strided: a Gather of the strided positions from the flattened input -----------

def _strided_positions(size: list[int], stride: list[int], offset: int) -> np.ndarray:
    positions = np.full(size, offset, np.int64)
    for dim, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        positions = positions + (np.arange(n, dtype=np.int64) * step).reshape(shape)
    return positions


@lowering("torch.as_strided", "Tensor.as_strided")
def as_strided(b, op):
    size, stride = [int(s) for s in op.params["size"]], [int(s) for s in op.params["stride"]]
    offset = int(op.params.get("storage_offset") or 0)
    if len(size) != len(stride):
        raise Unsupported("size and stride of different lengths")
    numel = int(np.prod(_static(b, op.inputs[0], "input")))
    positions = _strided_positions(size, stride, offset)
    if positions.size and not 0 <= positions.min() <= positions.max() < numel:
        raise Unsupported("strided view reaches outside the input")
    flat = b.node("Reshape", [b.x(op), b.const([-1], hint="shape")])
    b.node("Gather", [flat, b.const(positions, hint="positions")], b.y(op), axis=0)


# --- F.pdist: distances between the rows of every pair i < j, in torch's order --------------

_NORM_REDUCTIONS = {1.0: "ReduceL1", 2.0: "ReduceL2"}


def _norm_p(b, diff: str, p: float, dtype: str) -> str:
    """The p-norm of each row of `diff` over axis 1 (p = 0: the count of nonzeros)."""
    axes = b.const([1], hint="axes")
    if p in _NORM_REDUCTIONS:
        return b.node(_NORM_REDUCTIONS[p], [diff, axes], keepdims=0)
    if math.isinf(p):
        return b.node("ReduceMax", [b.node("Abs", [diff]), axes], keepdims=0)
    if p == 0:
        differs = b.node("Not", [b.node("Equal", [diff, b.const(0, dtype, "zero")])])
        nonzero = b.node("Cast", [differs], to=onnx_type(dtype))
        return b.node("ReduceSum", [nonzero, axes], keepdims=0)
    powered = b.node("Pow", [b.node("Abs", [diff]), b.const(p, dtype, "p")])
    total = b.node("ReduceSum", [powered, axes], keepdims=0)
    return b.node("Pow", [total, b.const(1.0 / p, dtype, "inv_p")])


@lowering("F.pdist", "torch.pdist")
def pdist(b, op):
    shape = _static(b, op.inputs[0], "input")
    dtype = b.dtype(op.inputs[0])
    if len(shape) != 2 or shape[0] < 2 or not b.is_float(op.inputs[0]):
        raise Unsupported("needs a float (N, M) input with N >= 2")
    p = float(op.params.get("p", 2.0))
    if p < 0:
        raise Unsupported(f"p={p} must be non-negative")
    first, second = np.triu_indices(shape[0], k=1)
    rows_a = b.node("Gather", [b.x(op), b.const(first.astype(np.int64), hint="rows")], axis=0)
    rows_b = b.node("Gather", [b.x(op), b.const(second.astype(np.int64), hint="rows")], axis=0)
    b.node("Identity", [_norm_p(b, b.node("Sub", [rows_a, rows_b]), p, dtype)], b.y(op))


# --- torch.cumprod: out[i] = prod over j <= i of x[j], as one masked ReduceProd --------------

@lowering("torch.cumprod", "Tensor.cumprod")
def cumprod(b, op):
    """x gets a new axis i before dim; entries with j > i are replaced by 1, then the product
    over j. Exact products (no log/exp), L times the memory: meant for moderate L."""
    shape = _static(b, op.inputs[0], "input")
    if not shape:
        b.node("Identity", [_accumulator(b, op)], b.y(op))
        return
    dim = axis(int(op.params["dim"]), len(shape))
    length = shape[dim]
    if int(np.prod(shape)) * length > _MAX_CUMPROD_ELEMENTS:
        raise Unsupported(f"length {length} along dim makes the masked copy too large")
    dtype = b.dtype(op.outputs[0])
    x = b.node("Unsqueeze", [_accumulator(b, op), b.const([dim], hint="axes")])
    mask = np.tril(np.ones((length, length), bool)).reshape(
        (length, length) + (1,) * (len(shape) - dim - 1))
    masked = b.node("Where", [b.const(mask, "bool", "lower"), x, b.const(1, dtype, "one")])
    b.node("ReduceProd", [masked, b.const([dim + 1], hint="axes")], b.y(op), keepdims=0)


# --- torch.lgamma: Lanczos approximation (g = 7, 9 terms), reflection below 0.5 -------------
# log|Gamma(x)| = log(sqrt(2 pi)) + (z + 0.5) log(t) - t + log(A(z)), z = x - 1, t = z + 7.5,
# A(z) = c0 + sum_k c_k / (z + k); for x < 0.5: log(pi / |sin(pi x)|) - log|Gamma(1 - x)|.
# Evaluated in float64 (then cast back): A(z) sums terms of alternating sign up to ~1e3.

_LANCZOS_G = 7.0
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7]


def _lanczos(b, w: str) -> str:
    """log Gamma(w) for w >= 0.5 (float64)."""
    z = b.node("Sub", [w, b.const(1.0, "f64", "one")])
    last = b.const([-1], hint="axes")
    shifted = b.node("Add", [b.node("Unsqueeze", [z, last]),
                             b.const(np.arange(1, len(_LANCZOS), dtype=np.float64), "f64", "k")])
    series = b.node("ReduceSum", [b.node("Div", [b.const(_LANCZOS[1:], "f64", "lanczos"),
                                                 shifted]), last], keepdims=0)
    a = b.node("Add", [series, b.const(_LANCZOS[0], "f64", "lanczos0")])
    t = b.node("Add", [z, b.const(_LANCZOS_G + 0.5, "f64", "g_half")])
    power = b.node("Mul", [b.node("Add", [z, b.const(0.5, "f64", "half")]), b.node("Log", [t])])
    body = b.node("Add", [b.node("Sub", [power, t]), b.node("Log", [a])])
    return b.node("Add", [body, b.const(0.5 * math.log(2 * math.pi), "f64", "log_sqrt_2pi")])


def _reflected(b, x: str, small: str, lg: str) -> str:
    """log(pi / |sin(pi x)|) - lg where x < 0.5, with +inf at the poles (x = 0, -1, ...)."""
    sine = b.node("Abs", [b.node("Sin", [b.node("Mul", [x, b.const(math.pi, "f64", "pi")])])])
    mirror = b.node("Sub", [b.node("Log", [b.node("Div", [b.const(math.pi, "f64", "pi"), sine])]),
                            lg])
    pole = b.node("And", [b.node("Equal", [x, b.node("Floor", [x])]),
                          b.node("LessOrEqual", [x, b.const(0.0, "f64", "zero")])])
    mirror = b.node("Where", [pole, b.const(np.inf, "f64", "inf"), mirror])
    return b.node("Where", [small, mirror, lg])


@lowering("torch.lgamma", "Tensor.lgamma", "torch.special.gammaln")
def lgamma(b, op):
    if not b.is_float(op.inputs[0]) or b.dtype(op.outputs[0]) not in ("f32", "f64", "f16"):
        raise Unsupported("lgamma of a non-float tensor")
    x = b.x(op)
    if b.dtype(op.inputs[0]) != "f64":
        x = b.node("Cast", [x], to=onnx_type("f64"))
    small = b.node("Less", [x, b.const(0.5, "f64", "half")])
    w = b.node("Where", [small, b.node("Sub", [b.const(1.0, "f64", "one"), x]), x])
    result = _reflected(b, x, small, _lanczos(b, w))
    b.node("Cast", [result], b.y(op), to=onnx_type(b.dtype(op.outputs[0])))
