"""Special functions: lgamma / special.gammaln by the Lanczos approximation (ONNX has no
gamma function), with the reflection formula below 0.5."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..dtypes import onnx_type
from ..registry import LOWERINGS

# Lanczos approximation (g = 7, 9 terms), reflection below 0.5:
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


@LOWERINGS.register("torch.lgamma", "Tensor.lgamma", "torch.special.gammaln")
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
