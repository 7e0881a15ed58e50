"""pnnx.Expression -> element-wise ONNX nodes, following torch's type promotion; shared by the
expression rules and by the shape family (a reshape target that follows the input).

Sub-trees without inputs (and `size(@i,d)` of static dims) fold to constants; a fully
constant expression (e.g. a reshape shape list) becomes an initializer. The size of a dynamic
dim is read at run time (Shape, Gather), and a list with such items is their Concat, so a shape
that follows the input (inputshape2) stays symbolic.

On complex operands (looked up in registry.COMPLEX_LOWERINGS) add, sub, mul and neg work on
the (..., 2) real pairs and abs gives the real magnitude."""
from __future__ import annotations

import math

import numpy as np

from ... import expression as ex
from ...errors import ExpressionError, Unsupported
from .dtypes import COMPLEX_PARTS, FLOATS, TORCH_NAMES, numpy_type, onnx_type
from .promote import PROMOTION_ORDER

_UNSIGNED_BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "max": "Max", "maximum": "Max", "min": "Min", "minimum": "Min"}
_BITWISE = {"and": ("And", "BitwiseAnd"), "or": ("Or", "BitwiseOr"), "xor": ("Xor", "BitwiseXor")}
_UNARY = {"abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "tanh": "Tanh", "ceil": "Ceil", "floor": "Floor", "round": "Round", "sign": "Sign",
          "erf": "Erf", "reciprocal": "Reciprocal"}
_BOOL_ARITH = {"add": "Or", "mul": "And", "max": "Or", "maximum": "Or", "min": "And",
               "minimum": "And"}
_KEEP_INT = {"abs", "neg", "sign", "ceil", "floor", "round", "square", "trunc"}


class _Value:
    """A lowered sub-expression: an ONNX value with a dtype, or a Python constant."""

    def __init__(self, name=None, dtype=None, const=None):
        self.name, self.dtype, self.const = name, dtype, const

    @property
    def is_const(self):
        return self.name is None


def parse_expression(op) -> ex.Node:
    """The expression tree of a pnnx.Expression operator; a malformed one is Unsupported."""
    try:
        return ex.parse(op.params.get("expr"))
    except ExpressionError as err:
        raise Unsupported(str(err)) from err


def lower_expression(ctx, op):
    """pnnx.Expression's ONNX nodes (the rule in families/expression.py)."""
    tree = parse_expression(op)
    out = op.outputs[0]
    value = _Lowerer(ctx, op.inputs).lower(tree)
    if value.is_const:  # e.g. a reshape shape list, or arithmetic on literals only
        dtype = "i64" if isinstance(value.const, list) or _untyped_size(out, value.const) else ctx.dtype(out)
        ctx.weight(np.asarray(value.const, dtype=numpy_type(dtype)), f"{op.name}.const", out=out.name)
        return
    _finish(ctx, op, value, out)


def _untyped_size(out, const) -> bool:
    """An int the IR gives no dtype (a size, e.g. `floor_divide(16,2)` as a slice bound): i64."""
    return out.dtype is None and isinstance(const, int) and not isinstance(const, bool)


def _finish(ctx, op, value, out):
    target = out.dtype or value.dtype  # a shape list or a size carries no dtype in the IR
    produced_here = ctx.nodes and ctx.nodes[-1].output[0] == value.name and \
        value.name not in {i.name for i in op.inputs}
    if value.dtype != target:
        ctx.node("Cast", [value.name], out.name, to=onnx_type(target))
    elif produced_here:
        ctx.nodes[-1].output[0] = out.name
    else:
        ctx.node("Identity", [value.name], out.name)


def shape_tensor(ctx, items: list, operands: list) -> str:
    """A torch-ordered shape (expression items whose `@i` are `operands`, as
    shape_lists.reshape_target gives them) as a 1-D int64 tensor: a constant, or the Concat of
    its items where some follow the input."""
    value = _Lowerer(ctx, operands).lower(ex.ListExpr(tuple(items)))
    return ctx.const([int(v) for v in value.const], hint="shape") if value.is_const else value.name


def _as_int64(ctx, value) -> str:
    return value.name if value.dtype == "i64" else ctx.node("Cast", [value.name], to=onnx_type("i64"))


class _Lowerer:
    def __init__(self, ctx, operands):
        self.ctx, self.operands = ctx, operands

    def lower(self, node) -> _Value:
        if isinstance(node, ex.Input):
            if node.index >= len(self.operands):
                raise Unsupported(f"@{node.index} has no input operand")
            operand = self.operands[node.index]
            return _Value(operand.name, self.ctx.dtype(operand))
        if isinstance(node, ex.Literal):
            if isinstance(node.value, (complex, str)) or node.value is None:
                raise Unsupported(f"literal {node.text}")
            return _Value(const=node.value)
        if isinstance(node, ex.ListExpr):
            items = [self.lower(i) for i in node.items]
            if all(i.is_const for i in items):
                return _Value(const=[i.const for i in items])
            return self.int_list(items)
        return self.call(node)

    def int_list(self, items) -> _Value:
        """A list of sizes some of which are known only at run time: Concat of one-element parts."""
        ctx, axes = self.ctx, self.ctx.const([0], hint="axes")
        parts = []
        for item in items:
            if item.is_const and (isinstance(item.const, bool) or not isinstance(item.const, int)):
                raise Unsupported(f"{item.const!r} in a list of sizes")
            parts.append(ctx.const([item.const], hint="size") if item.is_const
                         else ctx.node("Unsqueeze", [_as_int64(ctx, item), axes]))
        return _Value(ctx.node("Concat", parts, axis=0), "i64")

    def call(self, node) -> _Value:
        f = node.func
        if f == "size":
            return self.size(node)
        args = [self.lower(a) for a in node.args]
        if all(a.is_const for a in args):
            return _Value(const=_fold(f, [a.const for a in args]))
        if f in ex.CASTS:
            target = TORCH_NAMES.get(f)
            if target is None:
                raise Unsupported(f"cast {f}")
            return self.emit("Cast", args, target, to=onnx_type(target))
        if f == "int":
            raise Unsupported("int() of a tensor")
        if len(args) == 1:
            return self.unary(f, args[0])
        return self.binary(f, args)

    def size(self, node) -> _Value:
        if len(node.args) != 2 or not isinstance(node.args[0], ex.Input):
            raise Unsupported("size() of the whole shape")
        if node.args[0].index >= len(self.operands):
            raise Unsupported(f"@{node.args[0].index} has no input operand")
        operand = self.operands[node.args[0].index]
        shape = self.ctx.shape(operand)
        dim = self.lower(node.args[1]).const
        if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
            raise Unsupported(f"size() of dim {dim!r} of a rank-{len(shape)} tensor")
        if shape[dim] >= 0:
            return _Value(const=shape[dim])
        sizes = self.ctx.node("Shape", [operand.name])  # read at run time: the dim follows the input
        return _Value(self.ctx.node("Gather", [sizes, self.ctx.const(dim % len(shape), hint="dim")], axis=0), "i64")

    # --- nodes -----------------------------------------------------------------------------
    def emit(self, onnx_op, args, dtype, **attrs) -> _Value:
        names = [self.as_tensor(a, dtype) if onnx_op != "Cast" else a.name for a in args]
        return _Value(self.ctx.node(onnx_op, names, 1, **attrs), dtype)

    def as_tensor(self, value, dtype) -> str:
        if value.is_const:
            return self.ctx.const(value.const, dtype, "scalar")
        if value.dtype != dtype:
            return self.ctx.node("Cast", [value.name], to=onnx_type(dtype))
        return value.name

    def unary(self, f, a) -> _Value:
        if f in ("ceil", "floor", "round", "trunc") and a.dtype not in FLOATS:
            return a  # already integral
        dtype = a.dtype if a.dtype in FLOATS or f in _KEEP_INT else "f32"
        if f in _UNARY:
            return self.emit(_UNARY[f], [a], dtype)
        if f == "square":
            return self.emit("Mul", [a, a], dtype)
        if f == "rsqrt":
            return self.emit("Reciprocal", [self.emit("Sqrt", [a], dtype)], dtype)
        if f == "log10":
            return self.emit("Div", [self.emit("Log", [a], dtype), _Value(const=math.log(10))], dtype)
        if f == "log1p":
            return self.emit("Log", [self.emit("Add", [a, _Value(const=1.0)], dtype)], dtype)
        if f == "expm1":
            return self.emit("Sub", [self.emit("Exp", [a], dtype), _Value(const=1.0)], dtype)
        if f == "trunc":
            if dtype not in FLOATS:
                return a
            floor = self.emit("Floor", [self.emit("Abs", [a], dtype)], dtype)
            return self.emit("Mul", [self.emit("Sign", [a], dtype), floor], dtype)
        raise Unsupported(f"expression function {f}")

    def binary(self, f, args) -> _Value:
        dtype = _promote(args)
        if f == "div" and dtype not in FLOATS:
            dtype = "f32"
        if dtype == "bool" and f in _BOOL_ARITH:
            return self.emit(_BOOL_ARITH[f], args, dtype)
        if f in _BINARY:
            return self.emit(_BINARY[f], args, dtype)
        if f == "logaddexp" and dtype in FLOATS:  # max + log1p(exp(-|a - b|)), stable
            gap = self.emit("Neg", [self.emit("Abs", [self.emit("Sub", args, dtype)], dtype)], dtype)
            tail = self.emit("Log", [self.emit("Add", [self.emit("Exp", [gap], dtype),
                                                        _Value(const=1.0)], dtype)], dtype)
            return self.emit("Add", [self.emit("Max", args, dtype), tail], dtype)
        if f in _BITWISE:
            return self.emit(_BITWISE[f][0 if dtype == "bool" else 1], args, dtype)
        if f == "fmod":
            return self.emit("Mod", args, dtype, fmod=1)  # C-style: sign of the dividend
        if f == "remainder":
            if dtype not in FLOATS:
                return self.emit("Mod", args, dtype, fmod=0)
            quotient = self.emit("Floor", [self.emit("Div", args, dtype)], dtype)
            return self.emit("Sub", [args[0], self.emit("Mul", [quotient, args[1]], dtype)], dtype)
        if f in ("lshift", "rshift") and dtype in _UNSIGNED_BITS:  # BitShift; torch gives 0 past the width
            return self.unsigned_shift(*args, dtype, left=f == "lshift")
        if f == "floor_divide" and dtype in FLOATS:
            return self.emit("Floor", [self.emit("Div", args, dtype)], dtype)
        if f == "floor_divide":  # integer Div truncates: take away the floored remainder first
            exact = self.emit("Sub", [args[0], self.emit("Mod", args, dtype, fmod=0)], dtype)
            return self.emit("Div", [exact, args[1]], dtype)
        if f == "atan2":
            return self.atan2(*args, dtype if dtype in FLOATS else "f32")
        raise Unsupported(f"expression function {f} on {dtype}")

    def unsigned_shift(self, x, s, dtype, left: bool) -> _Value:
        ctx, xn, sn = self.ctx, self.as_tensor(x, dtype), self.as_tensor(s, dtype)
        zero = ctx.const(0, dtype, "zero")
        valid = ctx.node("Less", [sn, ctx.const(_UNSIGNED_BITS[dtype], dtype, "bits")])
        shifted = ctx.node("BitShift", [xn, ctx.node("Where", [valid, sn, zero])],
                           direction="LEFT" if left else "RIGHT")
        return _Value(ctx.node("Where", [valid, shifted, zero]), dtype)

    def atan2(self, y, x, dtype) -> _Value:
        """atan(y / x), moved by +-pi where x < 0 (by y's sign); sign(y) * pi/2 where x == 0."""
        ctx, yn, xn = self.ctx, self.as_tensor(y, dtype), self.as_tensor(x, dtype)
        base = ctx.node("Atan", [ctx.node("Div", [yn, xn])])
        zero = ctx.const(0.0, dtype, "zero")
        # 1 / y carries y's sign bit, so y = -0.0 with x < 0 gives -pi as torch does
        y_sign = ctx.node("Div", [ctx.const(1.0, dtype, "one"), yn])
        shift = ctx.node("Where", [ctx.node("GreaterOrEqual", [y_sign, zero]),
                                 ctx.const(math.pi, dtype, "pi"), ctx.const(-math.pi, dtype, "neg_pi")])
        wrapped = ctx.node("Where", [ctx.node("Less", [xn, zero]), ctx.node("Add", [base, shift]), base])
        axis = ctx.node("Mul", [ctx.node("Sign", [yn]), ctx.const(math.pi / 2, dtype, "half_pi")])
        return _Value(ctx.node("Where", [ctx.node("Equal", [xn, zero]), axis, wrapped]), dtype)


def _promote(args) -> str:
    tensors = [a.dtype for a in args if not a.is_const]
    if any(t not in PROMOTION_ORDER for t in tensors):
        raise Unsupported(f"operands of dtype {tensors}")
    dtype = max(tensors, key=PROMOTION_ORDER.index)
    if dtype not in FLOATS and any(isinstance(a.const, float) for a in args if a.is_const):
        return "f32"
    return dtype


def _fold(f, values):
    node = ex.Call(f, tuple(ex.literal(v) for v in values))
    try:
        result = ex.evaluate(node, [])
    except Exception as err:  # e.g. a torch function applied to a Python number
        raise Unsupported(f"cannot fold {f}{tuple(values)}: {err}") from err
    return result.item() if hasattr(result, "item") else result


# --- pnnx.Expression on complex operands: add, sub, mul, neg of complex and real values, abs
# (complex -> real). A value is ("complex", name), ("real", name) or ("const", float).
def _pairs_of(ctx, value, dtype: str) -> str:
    kind, v = value
    if kind == "complex":
        return v
    if kind == "const":
        return ctx.const([v, 0.0], dtype, "complex_const")
    return ctx.node("Mul", [ctx.node("Unsqueeze", [v, ctx.const([-1], hint="axes")]),
                          ctx.const([1.0, 0.0], dtype, "as_complex")])


def _complex_product(ctx, x: str, y: str) -> str:
    def part(v, i):
        return ctx.node("Gather", [v, ctx.const(i, hint="part")], axis=-1)

    (xr, xi), (yr, yi) = (part(x, 0), part(x, 1)), (part(y, 0), part(y, 1))
    real = ctx.node("Sub", [ctx.node("Mul", [xr, yr]), ctx.node("Mul", [xi, yi])])
    imag = ctx.node("Add", [ctx.node("Mul", [xr, yi]), ctx.node("Mul", [xi, yr])])
    last = ctx.const([-1], hint="axes")
    return ctx.node("Concat", [ctx.node("Unsqueeze", [real, last]), ctx.node("Unsqueeze", [imag, last])],
                  axis=-1)


def _scale(ctx, value, dtype: str) -> str:
    """A real factor, shaped to broadcast over a trailing (real, imaginary) axis."""
    kind, v = value
    if kind == "const":
        return ctx.const(v, dtype, "factor")
    return ctx.node("Unsqueeze", [v, ctx.const([-1], hint="axes")])


def _complex_call(ctx, func: str, args: list, dtype: str):
    if func == "abs" and args[0][0] == "complex":
        return "real", ctx.node("ReduceL2", [args[0][1], ctx.const([-1], hint="axes")], keepdims=0)
    if func == "neg" and args[0][0] == "complex":
        return "complex", ctx.node("Neg", [args[0][1]])
    if func in ("add", "sub") and len(args) == 2:
        pair = [_pairs_of(ctx, a, dtype) for a in args]
        return "complex", ctx.node("Add" if func == "add" else "Sub", pair)
    if func == "mul" and len(args) == 2:
        (ka, a), (kb, c) = args
        if ka == kb == "complex":
            return "complex", _complex_product(ctx, a, c)
        if ka == "complex":
            return "complex", ctx.node("Mul", [a, _scale(ctx, args[1], dtype)])
        if kb == "complex":
            return "complex", ctx.node("Mul", [c, _scale(ctx, args[0], dtype)])
    raise Unsupported(f"{func} on complex operands")


def _complex_tree(ctx, op, node, dtype: str):
    if isinstance(node, ex.Input):
        operand = op.inputs[node.index]
        return ("complex" if operand.dtype in COMPLEX_PARTS else "real"), operand.name
    if isinstance(node, ex.Literal) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return "const", float(node.value)
    if isinstance(node, ex.Call):
        return _complex_call(ctx, node.func, [_complex_tree(ctx, op, a, dtype) for a in node.args],
                             dtype)
    raise Unsupported(f"expression {op.params.get('expr')!r} on complex operands")


def lower_complex_expression(ctx, op):
    """pnnx.Expression on complex operands (the rule in families/expression.py)."""
    tree = parse_expression(op)
    out = op.outputs[0]
    dtype = COMPLEX_PARTS.get(out.dtype, out.dtype)
    kind, value = _complex_tree(ctx, op, tree, dtype)
    if kind != ("complex" if out.dtype in COMPLEX_PARTS else "real"):
        raise Unsupported(f"expression {op.params.get('expr')!r} on complex operands")
    ctx.node("Identity", [value], ctx.y(op))
