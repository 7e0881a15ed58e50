"""Elementwise arithmetic on ncnn blobs, shared by the families that compute with it:
BinaryOp / UnaryOp codes, expression trees (pnnx.Expression, the torch.* elementwise
functions, formulas such as softsign or pairwise_distance) lowered to chains of BinaryOp,
UnaryOp and Erf, and one-layer emitters for hand-built formulas.

A literal operand becomes BinaryOp's scalar (1=1 2=value), reversed ops (rsub, rdiv, ...) when
the literal comes first. Operands of different ncnn rank are reshaped to equal rank (leading
1s) first, so ncnn broadcasts them the way torch does. ncnn's BinaryOp pow computes
exp(y * log(x)), which is garbage for x <= 0, so integer powers are built from squares and
products and a fractional power clamps its base to FLT_MIN first."""
from __future__ import annotations

import math
import operator

import numpy as np

from ... import expression as ex
from ...errors import Unsupported
from .context import Context, param
from .shape_expr import with_outer_ones


# name: (op, reversed op for a literal first operand, python fold)
BINARY = {
    "add": (0, 0, operator.add), "sub": (1, 7, operator.sub), "mul": (2, 2, operator.mul),
    "div": (3, 8, operator.truediv), "max": (4, 4, max), "maximum": (4, 4, max),
    "min": (5, 5, min), "minimum": (5, 5, min), "pow": (6, 9, operator.pow),
    "atan2": (10, 11, math.atan2), "fmod": (12, 13, math.fmod), "logaddexp": (14, 14, None),
    "floor_divide": (15, 16, operator.floordiv), "remainder": (17, 18, operator.mod),
}
UNARY = {"abs": 0, "neg": 1, "floor": 2, "ceil": 3, "square": 4, "sqrt": 5, "rsqrt": 6, "exp": 7,
         "log": 8, "sin": 9, "cos": 10, "tan": 11, "asin": 12, "acos": 13, "atan": 14,
         "reciprocal": 15, "tanh": 16, "log10": 17, "round": 18, "trunc": 19, "sign": 20,
         "expm1": 21, "sinh": 22, "asinh": 23, "cosh": 24, "acosh": 25, "atanh": 26, "log1p": 27}
ADD, SUB, MUL = (BINARY[f][0] for f in ("add", "sub", "mul"))
RSUB = BINARY["sub"][1]
ABS = UNARY["abs"]
FLT_MIN = float(np.finfo(np.float32).tiny)


class _Value:
    """A lowered sub-expression: a blob with its ncnn shape, or a Python number."""

    def __init__(self, blob=None, shape=None, number=None, flat=None) -> None:
        self.blob, self.shape, self.number = blob, shape, number
        self.flat = flat  # a (c) blob holding the same data as this (c,1,..,1) one, or None


def lower_tree(ctx: Context, op, node, inputs, out_name: str, known: dict | None = None) -> None:
    """`node` over `inputs` into `out_name`; `known`: sub-expressions a caller has already
    lowered (node -> (blob, ncnn shape)), such as a blob the arguments do not hold."""
    memo = {n: _Value(blob, list(shape)) for n, (blob, shape) in (known or {}).items()}
    result = _lower(ctx, op, node, inputs, out_name, memo, top=True)
    if result.number is not None:
        raise Unsupported("the expression is a constant")
    if result.blob != out_name:  # the expression is one of its inputs
        ctx.aliases[out_name] = result.blob


def _lower(ctx, op, node, inputs, out_name, memo: dict, top=False) -> _Value:
    """`memo`: the sub-expressions lowered so far, each lowered once however often it appears."""
    if node not in memo:
        memo[node] = _lower_node(ctx, op, node, inputs, out_name, memo, top)
    return memo[node]


def _lower_node(ctx, op, node, inputs, out_name, memo: dict, top: bool) -> _Value:
    if isinstance(node, ex.Input):
        operand = inputs[node.index]
        unconverted = ctx.views.get(operand.name, (None,))[0] is None
        return _Value(ctx.blob(operand), ctx.shape(operand), flat=ctx.flat_views.get(operand.name) if unconverted else None)
    if isinstance(node, ex.Literal):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise Unsupported(f"literal {node.text} has no ncnn form")
        return _Value(number=node.value)
    if not isinstance(node, ex.Call):
        raise Unsupported("list expressions are not lowered")
    if node.func == "remainder" and len(node.args) == 2:
        node = _python_remainder(*node.args)
    args = [_lower(ctx, op, a, inputs, out_name, memo) for a in node.args]
    target = out_name if top else ctx.temp(out_name)
    if node.func in BINARY and len(args) == 2:
        return _binary(ctx, node.func, args, target)
    if node.func in UNARY or node.func == "erf":
        return _unary(ctx, node.func, args[0], target)
    if node.func in ex.CASTS and args[0].blob is not None:
        return args[0] if node.func in ("torch.float", "torch.float32") else _cast_error(node.func)
    raise Unsupported(f"expression function {node.func!r} has no ncnn lowering")


def _python_remainder(a, b):
    """a - floor_divide(a, b) * b: torch's remainder takes the sign of the divisor."""
    return ex.Call("sub", (a, ex.Call("mul", (ex.Call("floor_divide", (a, b)), b))))


def _cast_error(func: str):
    raise Unsupported(f"cast {func} has no ncnn lowering")


def _unary(ctx, func, a: _Value, target: str) -> _Value:
    if a.number is not None:
        raise Unsupported(f"{func} of a constant is not folded")
    if func == "erf":
        ctx.emit("Erf", "erf", [a.blob], [target])
    else:
        ctx.emit("UnaryOp", func, [a.blob], [target], {0: UNARY[func]})
    return _Value(target, a.shape)


MAX_INT_POWER = 64  # integer exponents up to this are products of squares


def int_power(ctx, src: str, p: int, out: str) -> str:
    """src ** p for an integer p >= 1 by squaring, into `out` (`src` itself when p is 1):
    ncnn's BinaryOp pow computes exp(p * log(x)), which is garbage for x <= 0."""
    if p == 1:
        return src
    half = int_power(ctx, src, p // 2, ctx.temp(out))
    squared = out if p % 2 == 0 else ctx.temp(out)
    ctx.emit("UnaryOp", "square", [half], [squared], {0: UNARY["square"]})
    if p % 2:
        ctx.emit("BinaryOp", "mul", [squared, src], [out], {0: BINARY["mul"][0]})
    return out


def _integer_exponent(func, a: _Value, b: _Value) -> int | None:
    if func != "pow" or a.number is not None or b.number is None or isinstance(b.number, bool):
        return None
    n = b.number
    return int(n) if float(n).is_integer() and 1 <= abs(n) <= MAX_INT_POWER else None


def _binary(ctx, func, args: list[_Value], target: str) -> _Value:
    op_type, reversed_type, fold = BINARY[func]
    a, b = args
    if a.number is not None and b.number is not None:
        if fold is None:
            raise Unsupported(f"{func} of two constants is not folded")
        return _Value(number=fold(a.number, b.number))
    n = _integer_exponent(func, a, b)
    if n is not None:
        power = int_power(ctx, a.blob, abs(n), target if n > 0 else ctx.temp(target))
        if n < 0:
            ctx.emit("UnaryOp", "reciprocal", [power], [target], {0: UNARY["reciprocal"]})
            power = target
        return _Value(power, a.shape)
    if b.number is not None or a.number is not None:
        tensor, scalar, code = (a, b.number, op_type) if b.number is not None else (b, a.number, reversed_type)
        ctx.emit("BinaryOp", func, [tensor.blob], [target], {0: code, 1: 1, 2: float(scalar)})
        return _Value(target, tensor.shape)
    a, b = _channel_vector(a, b), _channel_vector(b, a)
    a, b = _same_rank(ctx, a, target), _same_rank(ctx, b, target, len(a.shape))
    a = _same_rank(ctx, a, target, len(b.shape))
    ctx.emit("BinaryOp", func, [a.blob, b.blob], [target], {0: op_type})
    shape = [max(x, y) for x, y in zip(a.shape, b.shape)]
    return _Value(target, shape)


def _channel_vector(v: _Value, other: _Value) -> _Value:
    """A (c,1,..,1) operand against a blob of its rank whose outer dim is c, read as its flat (c)
    blob: ncnn's BinaryOp broadcasts a 1-d blob of the outer dim's size along it (the channel,
    or the rows of a 2-d blob), so the Reshape back to (c,1,..,1) is left out, as upstream does."""
    if v.flat is None or other.shape is None or len(other.shape) != len(v.shape) or len(v.shape) < 2:
        return v
    if any(d != 1 for d in v.shape[1:]) or other.shape[0] != v.shape[0]:
        return v
    return _Value(v.flat, [v.shape[0]] + [1] * (len(v.shape) - 1))


def _same_rank(ctx, v: _Value, target: str, rank: int = 0) -> _Value:
    if len(v.shape) >= rank:
        return v
    shape = [1] * (rank - len(v.shape)) + list(v.shape)
    return _Value(with_outer_ones(ctx, v.blob, v.shape, rank, target), shape)


def lower_binary_function(ctx: Context, op, func: str) -> None:
    """torch.<func>(input, other) (alpha, rounding_mode="floor" included) into op's output."""
    a, b = argument_nodes(op, ("input", "other")).values()
    mode = param(op, "rounding_mode")
    if func == "div" and mode is not None:
        if mode != "floor":
            raise Unsupported(f"div with rounding_mode={mode!r} is not lowered")
        lower_tree(ctx, op, ex.Call("floor_divide", (a, b)), op.inputs, op.outputs[0].name)
        return
    alpha = param(op, "alpha", 1)
    if alpha != 1 and func in ("add", "sub"):
        b = ex.Call("mul", (b, ex.Literal(alpha, str(alpha))))
    lower_tree(ctx, op, ex.Call(func, (a, b)), op.inputs, op.outputs[0].name)


# --- the arguments of a torch function as expression nodes -------------------------------------
DEFAULTS = {"value": 1, "eps": 1e-6}


def argument_nodes(op, names: tuple[str, ...]) -> dict[int, ex.Node]:
    """@i -> the operator input bound to names[i] (by keyword, or by position for nn.* modules),
    else a literal of its number param."""
    nodes: dict[int, ex.Node] = {}
    for i, name in enumerate(names):
        operand = op.input(name, i)
        value = param(op, name, DEFAULTS.get(name))
        if operand is not None:
            nodes[i] = ex.input_ref(next(j for j, o in enumerate(op.inputs) if o is operand))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            nodes[i] = ex.literal(value)
        else:
            raise Unsupported(f"{op.type} argument {name} is neither a tensor nor a number")
    return nodes


def lower_expression(ctx: Context, op, text: str, names: tuple[str, ...], out: str) -> None:
    """The formula `text` over @i = the argument names[i] of op (a tensor or a number), into `out`."""
    tree = ex.remap_inputs(ex.parse(text), argument_nodes(op, names))
    lower_tree(ctx, op, tree, op.inputs, out)


# --- one-layer emitters on blobs of equal ncnn rank ---------------------------------------
def unary(ctx: Context, func: str, src: str, out: str) -> str:
    ctx.emit("UnaryOp", func, [src], [out], {0: UNARY[func]})
    return out


def binary(ctx: Context, func: str, a: str, b: str, out: str) -> str:
    ctx.emit("BinaryOp", func, [a, b], [out], {0: BINARY[func][0]})
    return out


def scalar(ctx: Context, func: str, src: str, number: float, out: str) -> str:
    ctx.emit("BinaryOp", func, [src], [out], {0: BINARY[func][0], 1: 1, 2: float(number)})
    return out


def power(ctx: Context, src: str, p: float, base: str) -> str:
    """src ** p (p > 0)."""
    if float(p).is_integer() and 1 <= p <= MAX_INT_POWER:
        return int_power(ctx, src, int(p), ctx.temp(base))
    clamped = scalar(ctx, "max", src, FLT_MIN, ctx.temp(base))
    return scalar(ctx, "pow", clamped, p, ctx.temp(base))


def root(ctx: Context, src: str, p: float, out: str) -> str:
    """src ** (1/p) for src >= 0 (p > 1): sqrt, else pow of src clamped away from 0."""
    if p == 2:
        return unary(ctx, "sqrt", src, out)
    clamped = scalar(ctx, "max", src, FLT_MIN, ctx.temp(out))
    return scalar(ctx, "pow", clamped, 1.0 / p, out)


def scaled(ctx: Context, blob: str, factor: float, base: str) -> str:
    """`blob` times a scalar, in a temp blob named after `base` (`blob` itself for 1)."""
    if factor == 1.0:
        return blob
    result = ctx.temp(base)
    ctx.emit("BinaryOp", "mul", [blob], [result], {0: MUL, 1: 1, 2: factor})
    return result
