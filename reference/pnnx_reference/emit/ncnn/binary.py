"""pnnx.Expression (and the elementwise torch.* / Tensor.* functions) -> chains of BinaryOp,
UnaryOp and Erf. A literal operand becomes BinaryOp's scalar (1=1 2=value), reversed ops
(rsub, rdiv, ...) when the literal comes first. Operands of different ncnn rank are reshaped
to equal rank (leading 1s) first, so ncnn broadcasts them the way torch does."""
from __future__ import annotations

import math
import operator

from ... import expression as ex
from .context import CannotLower, Context, dims_params, param
from .registry import lowers

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


class _Value:
    """A lowered sub-expression: a blob with its ncnn shape, or a Python number."""

    def __init__(self, blob=None, shape=None, number=None) -> None:
        self.blob, self.shape, self.number = blob, shape, number


def lower_tree(ctx: Context, op, node, inputs, out_name: str) -> None:
    result = _lower(ctx, op, node, inputs, out_name, top=True)
    if result.number is not None:
        raise CannotLower("the expression is a constant")
    if result.blob != out_name:  # the expression is one of its inputs
        ctx.aliases[out_name] = result.blob


def _lower(ctx, op, node, inputs, out_name, top=False) -> _Value:
    if isinstance(node, ex.Input):
        operand = inputs[node.index]
        return _Value(ctx.blob(operand), ctx.shape(operand))
    if isinstance(node, ex.Literal):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise CannotLower(f"literal {node.text} has no ncnn form")
        return _Value(number=node.value)
    if not isinstance(node, ex.Call):
        raise CannotLower("list expressions are not lowered")
    if node.func == "remainder" and len(node.args) == 2:
        node = _python_remainder(*node.args)
    args = [_lower(ctx, op, a, inputs, out_name) for a in node.args]
    target = out_name if top else ctx.temp(out_name)
    if node.func in BINARY and len(args) == 2:
        return _binary(ctx, node.func, args, target)
    if node.func in UNARY or node.func == "erf":
        return _unary(ctx, node.func, args[0], target)
    if node.func in ex.CASTS and args[0].blob is not None:
        return args[0] if node.func in ("torch.float", "torch.float32") else _cast_error(node.func)
    raise CannotLower(f"expression function {node.func!r} has no ncnn lowering")


def _python_remainder(a, b):
    """a - floor_divide(a, b) * b: torch's remainder takes the sign of the divisor."""
    return ex.Call("sub", (a, ex.Call("mul", (ex.Call("floor_divide", (a, b)), b))))


def _cast_error(func: str):
    raise CannotLower(f"cast {func} has no ncnn lowering")


def _unary(ctx, func, a: _Value, target: str) -> _Value:
    if a.number is not None:
        raise CannotLower(f"{func} of a constant is not folded")
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
            raise CannotLower(f"{func} of two constants is not folded")
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
    a, b = _same_rank(ctx, a, target), _same_rank(ctx, b, target, len(a.shape))
    a = _same_rank(ctx, a, target, len(b.shape))
    ctx.emit("BinaryOp", func, [a.blob, b.blob], [target], {0: op_type})
    shape = [max(x, y) for x, y in zip(a.shape, b.shape)]
    return _Value(target, shape)


def _same_rank(ctx, v: _Value, target: str, rank: int = 0) -> _Value:
    if len(v.shape) >= rank:
        return v
    shape = [1] * (rank - len(v.shape)) + list(v.shape)
    t = ctx.temp(target)
    ctx.emit("Reshape", "reshape", [v.blob], [t], dims_params(shape))
    return _Value(t, shape)


@lowers("pnnx.Expression")
def expression(ctx: Context, op) -> None:
    lower_tree(ctx, op, ex.parse(param(op, "expr")), op.inputs, op.outputs[0].name)


# --- the same operations written as torch functions ------------------------------------
def _args(op, names: tuple[str, ...]):
    """Expression nodes for the named arguments: tensor inputs by keyword (or position), else a
    literal param."""
    keys = op.inputnames or []
    nodes = []
    for position, name in enumerate(names):
        if name in keys:
            nodes.append(ex.Input(keys.index(name)))
        elif not keys and position < len(op.inputs):
            nodes.append(ex.Input(position))
        elif name in op.params and isinstance(op.params[name], (int, float)):
            nodes.append(ex.Literal(op.params[name], str(op.params[name])))
        else:
            raise CannotLower(f"argument {name} is neither a tensor nor a number")
    return nodes


def _binary_fn(func: str):
    def lower(ctx: Context, op) -> None:
        a, b = _args(op, ("input", "other"))
        mode = param(op, "rounding_mode")
        if func == "div" and mode is not None:
            if mode != "floor":
                raise CannotLower(f"div with rounding_mode={mode!r} is not lowered")
            lower_tree(ctx, op, ex.Call("floor_divide", (a, b)), op.inputs, op.outputs[0].name)
            return
        alpha = param(op, "alpha", 1)
        if alpha != 1 and func in ("add", "sub"):
            b = ex.Call("mul", (b, ex.Literal(alpha, str(alpha))))
        lower_tree(ctx, op, ex.Call(func, (a, b)), op.inputs, op.outputs[0].name)
    return lower


binary_function = _binary_fn  # for other families whose operators have an elementwise form


def _unary_fn(func: str):
    def lower(ctx: Context, op) -> None:
        node = ex.Call(func, tuple(_args(op, ("input",))))
        decimals = param(op, "decimals", 0) if func == "round" else 0
        if decimals:  # round(x * 10^d) / 10^d
            scale = ex.Literal(10.0 ** decimals, repr(10.0 ** decimals))
            node = ex.Call("div", (ex.Call(func, (ex.Call("mul", (node.args[0], scale)),)), scale))
        lower_tree(ctx, op, node, op.inputs, op.outputs[0].name)
    return lower


for _f in ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "fmod", "remainder",
           "floor_divide", "logaddexp"):
    lowers(f"torch.{_f}", f"Tensor.{_f}")(_binary_fn(_f))
for _f in list(UNARY) + ["erf"]:
    if _f != "tanh":  # torch.tanh is an activation (TanH)
        lowers(f"torch.{_f}", f"Tensor.{_f}")(_unary_fn(_f))
