"""Arithmetic and elementwise math calls -> one `pnnx.Expression` in upstream's grammar."""
from __future__ import annotations

import torch

from .literals import literal
from .shapes import SymInt, operands_of, render

UNARY = {n: n for n in (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf exp expm1 floor log log10 log1p "
    "neg reciprocal round rsqrt sign sin sinh sqrt square tan tanh trunc").split()}
UNARY.update({"negative": "neg", "__neg__": "neg", "__abs__": "abs", "absolute": "abs",
              "arccos": "acos", "arcsin": "asin", "arctan": "atan"})
BINARY = {n: n for n in "add sub mul div floor_divide remainder fmod atan2 maximum minimum pow logaddexp".split()}
BINARY.update({"true_divide": "div", "subtract": "sub", "multiply": "mul", "divide": "div",
               "__and__": "and", "__or__": "or", "__xor__": "xor", "bitwise_and": "and",
               "bitwise_or": "or", "bitwise_xor": "xor", "__lshift__": "lshift",
               "__rshift__": "rshift", "arctan2": "atan2", "__add__": "add", "__sub__": "sub",
               "__mul__": "mul", "__truediv__": "div", "__div__": "div", "__pow__": "pow",
               "__floordiv__": "floor_divide", "__mod__": "remainder"})
# Reflected forms: `2 - x` arrives as Tensor.__rsub__(x, 2).
REFLECTED = {"__rsub__": "sub", "rsub": "sub", "__rdiv__": "div", "__rtruediv__": "div",
             "__rpow__": "pow", "__rfloordiv__": "floor_divide", "__rmod__": "remainder",
             "__rmul__": "mul", "__radd__": "add", "__rand__": "and", "__ror__": "or",
             "__rxor__": "xor"}
_PREFIXES = ("torch.", "Tensor.")


def expression_func(op_type: str) -> str | None:
    """The method/function name if `op_type` is an arithmetic call, else None."""
    if not op_type.startswith(_PREFIXES):
        return None
    name = op_type.split(".", 1)[1]
    return name if name in UNARY or name in BINARY or name in REFLECTED else None


class Refs:
    """Operands an expression reads; each distinct operand gets one `@i`."""

    def __init__(self, lookup):
        self.lookup = lookup
        self.operands: list = []

    def ref(self, value) -> str:
        if isinstance(value, torch.Tensor):
            operand = self.lookup(value)
            for i, o in enumerate(self.operands):
                if o is operand:
                    return f"@{i}"
            self.operands.append(operand)
            return f"@{len(self.operands) - 1}"
        if isinstance(value, SymInt):
            return self._symint(value)
        return literal(value)

    def _symint(self, value: SymInt) -> str:
        for operand in operands_of(value, []):
            if not any(o is operand for o in self.operands):
                self.operands.append(operand)
        return render(value, self.operands)


def build(name: str, args: tuple, kwargs: dict, refs: Refs) -> str | None:
    """The expression text, or None when the call is not a plain elementwise one."""
    if kwargs.get("out") is not None:
        return None
    if name in UNARY and len(args) == 1 and not kwargs:
        return f"{UNARY[name]}({refs.ref(args[0])})"
    if len(args) != 2:
        return None
    a, b = args
    if name in REFLECTED:
        func, (a, b) = REFLECTED[name], ((a, b) if name in ("__rmul__", "__radd__") else (b, a))
    elif name in BINARY:
        func = BINARY[name]
    else:
        return None
    extra = set(kwargs) - {"alpha", "rounding_mode"}
    if extra:
        return None
    text_a, text_b = refs.ref(a), refs.ref(b)
    alpha = kwargs.get("alpha", 1)
    if alpha != 1:
        text_b = f"mul({text_b},{literal(alpha)})"
    mode = kwargs.get("rounding_mode")
    if func == "div" and mode == "floor":
        return f"floor_divide({text_a},{text_b})"
    if func == "div" and mode == "trunc":
        return f"trunc(div({text_a},{text_b}))"
    return f"{func}({text_a},{text_b})"
