"""Upstream's `pnnx.Expression` grammar: parse, print, render as Python, evaluate.

    E := FUNC "(" E {"," E} ")" | "@" INT | LITERAL | "[" [E {"," E}] "]"

e.g. `sqrt(div(add(mul(@0,2),@1),12))`. A parsed expression is a small immutable tree
(`Input`, `Literal`, `Call`, `ListExpr`). Every function name and literal is checked against
a closed table while parsing, so `render_python` can never emit code taken from the text.

`render_python` follows upstream's `_pnnx.py` rendering (infix `(a + b)`, `torch.sqrt(a)`,
`-(a)`, `v.size(1)`, ...) with two deliberate differences, both for correctness:
`int(x)` is kept as `int(...)` (upstream drops it, which turns `int(size*0.5)` into a float),
and torch functions wrap operands that are Python numbers (literals, sizes) in
`torch.tensor(...)` (upstream does so only for literals of `max`/`min`; `torch.abs(2)` fails). `evaluate` computes exactly what the rendered code does.
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass
from typing import Callable, Sequence, Union

from pnnx_reference.errors import ExpressionError
from pnnx_reference.formats.textfile import is_digits


# --- tree ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    index: int


@dataclass(frozen=True)
class Literal:
    value: object      # int, float, bool, None, complex, or a DTYPE_NAMES string
    text: str          # the upstream spelling


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple


@dataclass(frozen=True)
class ListExpr:
    items: tuple


Node = Union[Input, Literal, Call, ListExpr]


# --- function tables -------------------------------------------------------------------
INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floor_divide": "//", "remainder": "%",
         "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>"}
_INFIX_FN = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
             "floor_divide": operator.floordiv, "remainder": operator.mod, "and": operator.and_,
             "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
             "rshift": operator.rshift}
UNARY_TORCH = frozenset("""abs acos acosh asin asinh atan atanh ceil cos cosh erf exp expm1 floor
    log log10 log1p reciprocal round rsqrt sign sin sinh sqrt square tan tanh trunc""".split())
BINARY_TORCH = frozenset("atan2 fmod max maximum min minimum pow logaddexp".split())
_SCALAR_OK = frozenset({"pow"})  # torch functions that accept Python numbers directly
DTYPE_NAMES = frozenset("""torch.float torch.float32 torch.double torch.float64 torch.half
    torch.float16 torch.bfloat16 torch.int torch.int32 torch.long torch.int64 torch.short
    torch.int16 torch.int8 torch.uint8 torch.bool torch.complex64 torch.complex128 torch.cfloat
    torch.cdouble torch.quint8 torch.qint8 torch.qint32""".split())
QUANTIZED_DTYPE_NAMES = frozenset({"torch.quint8", "torch.qint8", "torch.qint32"})
CASTS = DTYPE_NAMES - QUANTIZED_DTYPE_NAMES  # `torch.float(@0)` casts its operand
ARITY = {**{f: 2 for f in INFIX}, **{f: 1 for f in UNARY_TORCH}, **{f: 2 for f in BINARY_TORCH},
         **{f: 1 for f in CASTS}, "neg": 1, "int": 1}
FUNCTIONS = frozenset(ARITY) | {"size"}


# --- constructors ------------------------------------------------------------------------
def input_ref(index: int) -> Input:
    return Input(int(index))


def literal(value) -> Literal:
    """A literal node spelled as upstream writes it."""
    if value is None or isinstance(value, bool):
        return Literal(value, str(value))
    if isinstance(value, int):
        return Literal(value, str(value))
    if isinstance(value, float):
        return Literal(value, format_float(value))
    if isinstance(value, complex):
        return Literal(value, _complex_text(value))
    if isinstance(value, str) and value in DTYPE_NAMES:
        return Literal(value, value)
    raise ExpressionError(f"cannot write {value!r} as an expression literal")


def call(func: str, *args: Node) -> Call:
    _check_call(func, len(args))
    return Call(func, tuple(args))


def list_expr(*items: Node) -> ListExpr:
    return ListExpr(tuple(items))


def _check_call(func: str, nargs: int) -> None:
    if func not in FUNCTIONS:
        raise ExpressionError(f"unknown expression function {_quote(func)}")
    want = (1, 2) if func == "size" else (ARITY[func],)
    if nargs not in want:
        raise ExpressionError(f"{func} takes {' or '.join(map(str, want))} operands, got {nargs}")


# --- float formatting: upstream float_to_string / double_to_string (formats.floatfmt) ---------
def format_float(value: float, double: bool = False) -> str:
    """Upstream's round-trip float spelling: `0.1`, `1.0`, `1.000000e-5`, `3.40282347e38`."""
    from pnnx_reference.formats.floatfmt import double_to_string, float_to_string

    return double_to_string(value) if double else float_to_string(value)


def _complex_text(value: complex) -> str:
    return "%e+%ej" % (value.real, value.imag)


# --- parsing -------------------------------------------------------------------------------
# Calls and lists nest at most this deep. Every recursive walk here (parse, print, render,
# evaluate) then stays far inside Python's recursion limit, and the rendered code inside the
# 200 nested parentheses Python's own parser accepts. Real expressions are a few levels deep;
# `passes.fuse_expression` stops fusing before a result would pass the bound.
MAX_DEPTH = 100

_INT = re.compile(r"-?\d+\Z")
_FLOAT = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\Z|-?inf\Z|nan\Z")
_COMPLEX = re.compile(r"(-?[\d.]+(?:[eE][-+]?\d+)?)\+?([-+]?[\d.]+(?:[eE][-+]?\d+)?)j\Z")
_TOKEN_END = re.compile(r"[(),\[\]]")


def depth(expr: str) -> int:
    """How deep the calls and lists of an expression text nest (`add(@0,mul(@1,2))`: 2)."""
    deepest = level = 0
    for c in expr:
        if c in "([":
            level += 1
            deepest = max(deepest, level)
        elif c in ")]":
            level -= 1
    return deepest


def _quote(text: str) -> str:
    """An expression quoted in an error message, shortened when long."""
    return repr(text) if len(text) <= 60 else f"{text[:60]!r}...({len(text)} chars)"


def parse(expr: str) -> Node:
    """Parse an upstream expression string; raises ExpressionError on anything else."""
    if not isinstance(expr, str) or not expr:
        raise ExpressionError("empty expression")
    if depth(expr) > MAX_DEPTH:
        raise ExpressionError(f"expression nested deeper than {MAX_DEPTH} levels")
    node, pos = _parse_at(expr, 0)
    if pos != len(expr):
        raise ExpressionError(f"unexpected {expr[pos:pos + 10]!r} at {pos} in expression {_quote(expr)}")
    return node


def _parse_at(s: str, pos: int) -> tuple[Node, int]:
    if pos >= len(s):
        raise ExpressionError(f"expression {_quote(s)} ends early")
    if s[pos] == "[":
        items, pos = _parse_args(s, pos + 1, "]")
        return ListExpr(tuple(items)), pos
    m = _TOKEN_END.search(s, pos)
    end = m.start() if m else len(s)
    token = s[pos:end]
    if end < len(s) and s[end] == "(":
        args, pos = _parse_args(s, end + 1, ")")
        _check_call(token, len(args))
        return Call(token, tuple(args)), pos
    return _parse_leaf(token, s), end


def _parse_args(s: str, pos: int, close: str) -> tuple[list[Node], int]:
    items: list[Node] = []
    if pos < len(s) and s[pos] == close:
        return items, pos + 1
    while True:
        node, pos = _parse_at(s, pos)
        items.append(node)
        if pos < len(s) and s[pos] == ",":
            pos += 1
        elif pos < len(s) and s[pos] == close:
            return items, pos + 1
        else:
            raise ExpressionError(f"expected ',' or {close!r} at {pos} in expression {_quote(s)}")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # a literal torch takes as a Python int


def _parse_leaf(token: str, s: str) -> Node:
    if token.startswith("@") and is_digits(token[1:]):
        if len(token) > 10:  # Python refuses past 4300 digits with its own error
            raise ExpressionError(f"input index {_quote(token)} is out of range in expression {_quote(s)}")
        return Input(int(token[1:]))
    if token in ("True", "False"):
        return Literal(token == "True", token)
    if token == "None":
        return Literal(None, token)
    if token in DTYPE_NAMES:
        return Literal(token, token)
    if _INT.match(token):
        if len(token.lstrip("-")) > 19 or not INT64_MIN <= int(token) <= INT64_MAX:
            raise ExpressionError(f"integer {_quote(token)} does not fit in int64 in expression {_quote(s)}")
        return Literal(int(token), token)
    if _FLOAT.match(token):
        return Literal(float(token), token)
    m = _COMPLEX.match(token)
    if m:
        return Literal(complex(float(m.group(1)), float(m.group(2))), token)
    raise ExpressionError(f"bad token {_quote(token)} in expression {_quote(s)}")


# --- printing --------------------------------------------------------------------------------
def to_string(node: Node) -> str:
    """The upstream spelling, e.g. `add(@0,mul(@1,2))`."""
    if isinstance(node, Input):
        return f"@{node.index}"
    if isinstance(node, Literal):
        return node.text
    if isinstance(node, ListExpr):
        return "[" + ",".join(to_string(i) for i in node.items) + "]"
    return f"{node.func}(" + ",".join(to_string(a) for a in node.args) + ")"


def input_indices(node: Node) -> list[int]:
    """The sorted distinct `@i` indices used by the expression."""
    found: set[int] = set()
    _walk_inputs(node, found)
    return sorted(found)


def _walk_inputs(node: Node, found: set[int]) -> None:
    if isinstance(node, Input):
        found.add(node.index)
    for child in _children(node):
        _walk_inputs(child, found)


def _children(node: Node) -> tuple:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, ListExpr):
        return node.items
    return ()


def remap_inputs(node: Node, mapping: Callable[[int], Node] | dict) -> Node:
    """Replace every `@i` by `mapping[i]` (a node or an int index)."""
    if isinstance(node, Input):
        new = mapping(node.index) if callable(mapping) else mapping[node.index]
        return Input(new) if isinstance(new, int) else new
    if isinstance(node, Call):
        return Call(node.func, tuple(remap_inputs(a, mapping) for a in node.args))
    if isinstance(node, ListExpr):
        return ListExpr(tuple(remap_inputs(i, mapping) for i in node.items))
    return node


# --- Python rendering --------------------------------------------------------------------------
def render_python(node: Node, input_names: Sequence[str]) -> str:
    """Python source for the expression; `input_names[i]` is the (trusted) variable for `@i`."""
    if isinstance(node, Input):
        if node.index >= len(input_names):
            raise ExpressionError(f"expression uses @{node.index} but the operator has {len(input_names)} inputs")
        return input_names[node.index]
    if isinstance(node, Literal):
        return _render_literal(node.value)
    if isinstance(node, ListExpr):
        return "[" + ", ".join(render_python(i, input_names) for i in node.items) + "]"
    return _render_call(node, [render_python(a, input_names) for a in node.args])


def _render_literal(value) -> str:
    if isinstance(value, float):
        return f"float('{value}')" if math.isinf(value) or math.isnan(value) else repr(value)
    if isinstance(value, str):  # a dtype name, checked against DTYPE_NAMES when parsed
        if value not in DTYPE_NAMES:
            raise ExpressionError(f"bad dtype literal {value!r}")
        return value
    return repr(value)


def _is_scalar(node: Node) -> bool:
    """True where the value is a Python number, not a tensor (literals, sizes, their maths)."""
    if isinstance(node, Literal):
        return True
    if isinstance(node, Call) and node.func in ("size", "int"):
        return True
    if isinstance(node, Call) and (node.func in INFIX or node.func == "neg"):
        return all(_is_scalar(a) for a in node.args)
    return False


def _tensor_args(node: Call) -> list[bool]:
    """Which operands of a torch function are wrapped in `torch.tensor(...)`: torch functions
    reject Python numbers, except `pow`, which needs only one tensor operand."""
    if node.func not in UNARY_TORCH and node.func not in BINARY_TORCH:
        return [False] * len(node.args)
    scalar = [_is_scalar(a) for a in node.args]
    if node.func in _SCALAR_OK:
        return [all(scalar)] + [False] * (len(scalar) - 1)
    return scalar


def _render_call(node: Call, args: list[str]) -> str:
    f = node.func
    if f in INFIX:
        return f"({args[0]} {INFIX[f]} {args[1]})"
    if f == "neg":
        return f"-({args[0]})"
    if f == "int":
        return f"int({args[0]})"
    if f == "size":
        return f"{args[0]}.size({args[1]})" if len(args) == 2 else f"{args[0]}.shape"
    if f in CASTS:
        return f"torch.as_tensor({args[0]}).to({f})"
    args = [f"torch.tensor({a})" if wrap else a for a, wrap in zip(args, _tensor_args(node))]
    return f"torch.{f}({', '.join(args)})"


# --- evaluation ---------------------------------------------------------------------------------
def evaluate(node: Node, inputs: Sequence):
    """Compute the expression on `inputs` (tensors or numbers) exactly as the rendered code does."""
    import torch

    if isinstance(node, Input):
        if node.index >= len(inputs):
            raise ExpressionError(f"expression uses @{node.index} but got {len(inputs)} inputs")
        return inputs[node.index]
    if isinstance(node, Literal):
        return getattr(torch, node.value[6:]) if isinstance(node.value, str) else node.value
    if isinstance(node, ListExpr):
        return [evaluate(i, inputs) for i in node.items]
    args = [evaluate(a, inputs) for a in node.args]
    return _eval_call(node, args, torch)


def _eval_call(node: Call, args: list, torch):
    f = node.func
    if f in _INFIX_FN:
        return _INFIX_FN[f](*args)
    if f == "neg":
        return -args[0]
    if f == "int":
        return int(args[0])
    if f == "size":
        return args[0].size(args[1]) if len(args) == 2 else args[0].shape
    if f in CASTS:
        return torch.as_tensor(args[0]).to(getattr(torch, f[6:]))
    args = [torch.tensor(a) if wrap else a for a, wrap in zip(args, _tensor_args(node))]
    return getattr(torch, f)(*args)
