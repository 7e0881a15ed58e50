"""pnnx.Expression -> chains of BinaryOp, UnaryOp and Erf (see arithmetic.py).

ncnn computes in floats, on bools carried as 0/1 and integers carried as their float values.
Each sub-expression is typed as torch types it (bool < integer < float):
- a float one is what torch computes too (it converts integer operands to float first): `div`
  of integers is true division, exp, sqrt, sin, ... are float functions;
- a bool one is lowered only where 0/1 arithmetic is the logic (mul, min, &: AND; add, max,
  |: OR; ^: |a - b|);
- an integer one only with functions exact on integers (add, sub, mul, floor_divide,
  remainder, fmod, abs, ...), so exact while every intermediate magnitude stays below 2^24
  (2048 with fp16 storage): values the converter cannot see. ncnn's CPU divides by multiplying
  with the reciprocal (-2996 / 7 gives -428.00003), so an integer floor_divide (and remainder)
  takes the nearest quotient and corrects it by the sign of the exact remainder, and a
  truncating division of integers (`trunc(div(a, b))`, torch.div's rounding_mode="trunc"; fmod)
  is sign(a) * sign(b) * floor_divide(|a|, |b|), never the truncated float quotient (so are
  floor and ceil of a quotient of integers)."""
from __future__ import annotations

from .... import expression as ex
from ....errors import Unsupported
from ..arithmetic import lower_tree
from ..context import Context, param
from ..registry import ANY, LOWERINGS
from ..shape_expr import shape_only

BOOL, INT, FLOAT = 0, 1, 2  # torch's promotion order
# a function of bools only -> the function computing it on 0/1 values (xor: |a - b|)
_ON_BOOLS = {"mul": "mul", "and": "mul", "min": "min", "minimum": "min",
             "add": "max", "or": "max", "max": "max", "maximum": "max", "xor": "xor"}
_EXACT_ON_INTEGERS = frozenset("""add sub mul neg abs square floor_divide remainder fmod max maximum min
                                  minimum sign floor ceil round trunc""".split())
# functions whose result torch keeps integer (or bool) for integer (or bool) arguments; the
# others (exp, sqrt, sin, atan2, ... and div) give a float result from the converted arguments
_KEEP_INTEGER = _EXACT_ON_INTEGERS | {"pow", "fmod", "and", "or", "xor", "lshift", "rshift"}


def _kind(dtype: str | None) -> int:
    if dtype == "bool":
        return BOOL
    return INT if dtype is not None and dtype[0] in "iu" else FLOAT


@LOWERINGS.register("pnnx.Expression", bool_operands=True, int_operands=True, batch=ANY)
def expression(ctx: Context, op) -> None:
    tree = ex.parse(param(op, "expr"))
    if shape_only(op.outputs[0]):
        return  # a shape its consumers write as an ncnn shape expression (shape_expr.py)
    if any(_kind(x.dtype) != FLOAT for x in op.inputs):
        tree, _ = _typed(tree, [_kind(x.dtype) for x in op.inputs])
    lower_tree(ctx, op, tree, op.inputs, op.outputs[0].name)


def _typed(node, kinds: list[int]):
    """(node with bool-only functions rewritten to their 0/1 form, its kind); Unsupported where
    the float computation is not torch's."""
    if isinstance(node, ex.Input):
        return node, kinds[node.index]
    if isinstance(node, ex.Literal):
        return node, FLOAT if isinstance(node.value, float) else INT
    if not isinstance(node, ex.Call):
        return node, FLOAT
    quotient = _integer_quotient(node, kinds) if node.func in _ROUNDED_QUOTIENT else None
    if quotient is not None:
        return _ROUNDED_QUOTIENT[node.func](*quotient), INT
    typed = [_typed(a, kinds) for a in node.args]
    args = tuple(a for a, _ in typed)
    kind = max((k for _, k in typed), default=FLOAT)
    if node.func not in _KEEP_INTEGER:
        return ex.Call(node.func, args), FLOAT
    if kind == BOOL:
        if node.func not in _ON_BOOLS or len(args) != 2:
            raise Unsupported(f"{node.func} on bools has no exact ncnn form (0/1 floats)")
        if node.func == "xor":
            return _call("abs", _call("sub", *args)), BOOL
        return ex.Call(_ON_BOOLS[node.func], args), BOOL
    if kind == INT and not _exact_on_integers(node.func, args):
        raise Unsupported(f"{node.func} on integers has no exact ncnn form (ncnn computes in floats)")
    if kind == INT and node.func == "floor_divide":
        return _floor_divide(*args), INT
    if kind == INT and node.func == "remainder":  # a - floor_divide(a, b) * b
        return _call("sub", args[0], _call("mul", _floor_divide(*args), args[1])), INT
    if kind == INT and node.func == "fmod":  # a - trunc(a / b) * b
        return _call("sub", args[0], _call("mul", _trunc_divide(*args), args[1])), INT
    return ex.Call(node.func, args), kind


def _call(func: str, *args):
    return ex.Call(func, tuple(args))


def _floor_divide(a, b):
    """floor(a / b) of integers from an inexact division: q = round(a / b) is the quotient
    or one above it, r = a - q * b is exact, and floor(r / b) (0 or -1: |r / b| <= 1/2, at
    least 1/|b| away from 0 unless r is 0) corrects it."""
    q = _call("round", _call("div", a, b))
    return _call("add", q, _call("floor", _call("div", _call("sub", a, _call("mul", q, b)), b)))


def _integer_quotient(node, kinds: list[int]):
    """(a, b) typed, when `node`'s one argument is div(a, b) of integers (or bools), else None."""
    if len(node.args) != 1 or not isinstance(node.args[0], ex.Call) or node.args[0].func != "div" \
            or len(node.args[0].args) != 2:
        return None
    typed = [_typed(a, kinds) for a in node.args[0].args]
    return tuple(a for a, _ in typed) if all(k != FLOAT for _, k in typed) else None


def _trunc_divide(a, b):
    """trunc(a / b) of integers, exactly: the floor quotient of the magnitudes, signed."""
    sign = _call("mul", _call("sign", a), _call("sign", b))
    return _call("mul", sign, _floor_divide(_call("abs", a), _call("abs", b)))


def _ceil_divide(a, b):
    return _call("neg", _floor_divide(_call("neg", a), b))


# trunc/floor/ceil of a quotient of integers, which torch computes from the correctly rounded
# float quotient: below 2^24 that never crosses an integer, so the exact integer forms agree
_ROUNDED_QUOTIENT = {"trunc": _trunc_divide, "floor": _floor_divide, "ceil": _ceil_divide}


def _exact_on_integers(func: str, args) -> bool:
    if func == "pow":  # a positive integer power is built from products (arithmetic.int_power)
        exponent = args[1] if len(args) == 2 else None
        return (isinstance(exponent, ex.Literal) and isinstance(exponent.value, int)
                and not isinstance(exponent.value, bool) and exponent.value >= 1)
    return func in _EXACT_ON_INTEGERS
