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


def _lanczos(ctx, w: str) -> str:
    """log Gamma(w) for w >= 0.5 (float64)."""
    z = ctx.node("Sub", [w, ctx.const(1.0, "f64", "one")])
    last = ctx.const([-1], hint="axes")
    shifted = ctx.node("Add", [ctx.node("Unsqueeze", [z, last]),
                             ctx.const(np.arange(1, len(_LANCZOS), dtype=np.float64), "f64", "k")])
    series = ctx.node("ReduceSum", [ctx.node("Div", [ctx.const(_LANCZOS[1:], "f64", "lanczos"),
                                                 shifted]), last], keepdims=0)
    a = ctx.node("Add", [series, ctx.const(_LANCZOS[0], "f64", "lanczos0")])
    t = ctx.node("Add", [z, ctx.const(_LANCZOS_G + 0.5, "f64", "g_half")])
    power = ctx.node("Mul", [ctx.node("Add", [z, ctx.const(0.5, "f64", "half")]), ctx.node("Log", [t])])
    body = ctx.node("Add", [ctx.node("Sub", [power, t]), ctx.node("Log", [a])])
    return ctx.node("Add", [body, ctx.const(0.5 * math.log(2 * math.pi), "f64", "log_sqrt_2pi")])


def _reflected(ctx, x: str, small: str, lg: str) -> str:
    """log(pi / |sin(pi x)|) - lg where x < 0.5, with +inf at the poles (x = 0, -1, ...)."""
    sine = ctx.node("Abs", [ctx.node("Sin", [ctx.node("Mul", [x, ctx.const(math.pi, "f64", "pi")])])])
    mirror = ctx.node("Sub", [ctx.node("Log", [ctx.node("Div", [ctx.const(math.pi, "f64", "pi"), sine])]),
                            lg])
    pole = ctx.node("And", [ctx.node("Equal", [x, ctx.node("Floor", [x])]),
                          ctx.node("LessOrEqual", [x, ctx.const(0.0, "f64", "zero")])])
    mirror = ctx.node("Where", [pole, ctx.const(np.inf, "f64", "inf"), mirror])
    return ctx.node("Where", [small, mirror, lg])


@LOWERINGS.register("torch.lgamma", "Tensor.lgamma", "torch.special.gammaln")
def lgamma(ctx, op):
    if not ctx.is_float(op.inputs[0]) or ctx.dtype(op.outputs[0]) not in ("f32", "f64", "f16"):
        raise Unsupported("lgamma of a non-float tensor")
    x = ctx.x(op)
    if ctx.dtype(op.inputs[0]) != "f64":
        x = ctx.node("Cast", [x], to=onnx_type("f64"))
    small = ctx.node("Less", [x, ctx.const(0.5, "f64", "half")])
    w = ctx.node("Where", [small, ctx.node("Sub", [ctx.const(1.0, "f64", "one"), x]), x])
    result = _reflected(ctx, x, small, _lanczos(ctx, w))
    ctx.node("Cast", [result], ctx.y(op), to=onnx_type(ctx.dtype(op.outputs[0])))
