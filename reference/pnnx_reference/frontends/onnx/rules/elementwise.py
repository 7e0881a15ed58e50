"""Arithmetic and elementwise math: Python operators and torch functions, which the tracer
fuses into one `pnnx.Expression` per chain. On ShapeValues (shape arithmetic) the same ops
run on the sizes themselves."""
from __future__ import annotations

import math
import operator

import torch

from ..values import ShapeValue, elementwise
from .operands import known_values, legacy_broadcast, scalar_operand
from .registry import RULES

rule = RULES.register


def _trunc_div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = a // b
        return q + 1 if q < 0 and q * b != a else q  # ONNX integer division truncates
    return a / b


_SHAPE_OPS = {"Add": operator.add, "Sub": operator.sub, "Mul": operator.mul, "Div": _trunc_div,
              "Max": max, "Min": min, "Mod": lambda a, b: a % b, "Pow": operator.pow}


def _binary(ctx, op_type: str, tensor_fn):
    if known_values(ctx, (0, 1)):
        return elementwise(_SHAPE_OPS[op_type], ctx.known(0), ctx.known(1))
    a, b = ctx.tensor(0), ctx.tensor(1)
    b = legacy_broadcast(ctx, a, b)
    if ctx.const(1) is not None and ctx.const(0) is None:
        b = legacy_broadcast(ctx, a, scalar_operand(ctx, 1, a))
    elif ctx.const(0) is not None and ctx.const(1) is None:
        a = scalar_operand(ctx, 0, b)
    return tensor_fn(a, b)


@rule("Add")
def add(ctx):
    return _binary(ctx, "Add", operator.add)


@rule("Sub")
def sub(ctx):
    return _binary(ctx, "Sub", operator.sub)


@rule("Mul")
def mul(ctx):
    return _binary(ctx, "Mul", operator.mul)


@rule("Div", produces=("torch.floor_divide", "torch.fmod"))
def div(ctx):
    def tensor_div(a, b):
        floating = any(isinstance(v, float) or (isinstance(v, torch.Tensor) and v.is_floating_point()) for v in (a, b))
        if floating:
            return a / b
        # integers truncate toward zero: a - fmod(a, b) is an exact multiple of b
        return torch.floor_divide(a - torch.fmod(a, b), b)
    return _binary(ctx, "Div", tensor_div)


@rule("Pow", produces=("torch.pow",))
def pow_(ctx):
    if known_values(ctx, (0, 1)):
        return elementwise(operator.pow, ctx.known(0), ctx.known(1))
    x = ctx.tensor(0)
    y = scalar_operand(ctx, 1, x) if ctx.const(1) is not None else ctx.tensor(1)
    return torch.pow(x, y)


@rule("Mod", produces=("torch.fmod", "torch.remainder"))
def mod(ctx):
    if known_values(ctx, (0, 1)):
        return elementwise(math.fmod if ctx.attr("fmod", 0) else operator.mod, ctx.known(0), ctx.known(1))
    fn = torch.fmod if ctx.attr("fmod", 0) else torch.remainder
    return _binary(ctx, "Mod", fn)


def _variadic(ctx, fn, shape_fn):
    present = [i for i in range(len(ctx.inputs)) if ctx.has(i)]
    if known_values(ctx, present):
        out = ctx.known(present[0])
        for i in present[1:]:
            out = elementwise(shape_fn, out, ctx.known(i))
        return out
    out = ctx.tensor(present[0])
    for i in present[1:]:
        out = fn(out, ctx.tensor(i))
    return out


@rule("Max", produces=("torch.maximum",))
def max_(ctx):
    return _variadic(ctx, torch.maximum, max)


@rule("Min", produces=("torch.minimum",))
def min_(ctx):
    return _variadic(ctx, torch.minimum, min)


@rule("Sum")
def sum_(ctx):
    return _variadic(ctx, operator.add, operator.add)


@rule("Mean")
def mean(ctx):
    present = [i for i in range(len(ctx.inputs)) if ctx.has(i)]
    return _variadic(ctx, operator.add, operator.add) / len(present)


# --- unary math --------------------------------------------------------------------------
_UNARY = {
    "Abs": torch.abs, "Neg": torch.neg, "Exp": torch.exp, "Log": torch.log, "Sqrt": torch.sqrt,
    "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan, "Asin": torch.asin, "Acos": torch.acos,
    "Atan": torch.atan, "Sinh": torch.sinh, "Cosh": torch.cosh, "Asinh": torch.asinh,
    "Acosh": torch.acosh, "Atanh": torch.atanh, "Ceil": torch.ceil, "Floor": torch.floor,
    "Round": torch.round, "Reciprocal": torch.reciprocal, "Erf": torch.erf, "Sign": torch.sign,
}
_SHAPE_UNARY = {"Abs": abs, "Neg": operator.neg, "Sign": lambda v: (v > 0) - (v < 0),
                "Ceil": lambda v: math.ceil(v) if isinstance(v, float) else v,
                "Floor": lambda v: math.floor(v) if isinstance(v, float) else v,
                "Sqrt": math.sqrt, "Reciprocal": lambda v: 1.0 / v}


def _unary(ctx):
    op_type = ctx.node.op_type
    value = ctx.x(0)
    if isinstance(value, ShapeValue) and op_type in _SHAPE_UNARY:
        return elementwise(_SHAPE_UNARY[op_type], value)
    x = ctx.tensor(0)
    if op_type == "Reciprocal" and not x.is_floating_point():
        ctx.fail("Reciprocal of an integer tensor")
    return _UNARY[op_type](x)


for _name in _UNARY:
    RULES.add(_name, _unary, produces=(f"torch.{_UNARY[_name].__name__}",))


@rule("BitShift")
def bit_shift(ctx):
    x, y = ctx.tensor(0), ctx.tensor(1)
    if ctx.const(1) is not None:
        y = scalar_operand(ctx, 1, x)
    return x << y if ctx.attr("direction") == "LEFT" else x >> y


@rule("IsNaN", produces=("torch.isnan",))
def is_nan(ctx):
    return torch.isnan(ctx.tensor(0))


@rule("IsInf", produces=("torch.isinf", "torch.zeros_like"))
def is_inf(ctx):
    x = ctx.tensor(0)
    negative, positive = ctx.attr("detect_negative", 1), ctx.attr("detect_positive", 1)
    if negative and positive:
        return torch.isinf(x)
    if positive:
        return torch.isposinf(x)
    if negative:
        return torch.isneginf(x)
    return torch.zeros_like(x, dtype=torch.bool)


@rule("Clip", produces=("torch.clamp",))
def clip(ctx):
    """`torch.clamp`; the bounds are attributes before opset 11, optional inputs after."""
    x = ctx.tensor(0)
    if ctx.opset < 11:
        low, high = ctx.attr("min"), ctx.attr("max")
    else:
        low = scalar_operand(ctx, 1, x) if ctx.has(1) else None
        high = scalar_operand(ctx, 2, x) if ctx.has(2) else None
    if low is None and high is None:
        return x
    return torch.clamp(x, min=low, max=high)


@rule("Swish", produces=("F.silu", "torch.sigmoid"))
def swish(ctx):
    """Opset 24: x * sigmoid(alpha * x)."""
    import torch.nn.functional as F

    x = ctx.tensor(0)
    alpha = float(ctx.attr("alpha", 1.0))
    return F.silu(x) if alpha == 1.0 else x * torch.sigmoid(x * alpha)
