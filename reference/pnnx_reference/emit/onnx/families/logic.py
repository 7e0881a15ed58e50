"""Comparisons, boolean logic (and, or, xor, not; a non-bool operand is true where nonzero),
bitwise not and shifts, isnan/isinf, where and masked_fill."""
from __future__ import annotations

from onnx import TensorProto

from ....errors import Unsupported
from ..dtypes import onnx_type
from ..promote import as_bool, same_dtype_operands
from ..registry import LOWERINGS

_COMPARE = {"eq": "Equal", "gt": "Greater", "lt": "Less", "ge": "GreaterOrEqual",
            "le": "LessOrEqual", "ne": "Equal", "greater": "Greater", "less": "Less",
            "greater_equal": "GreaterOrEqual", "less_equal": "LessOrEqual", "not_equal": "Equal"}
_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _compare(name, onnx_op):
    @LOWERINGS.register(f"torch.{name}", f"Tensor.{name}")
    def lower(ctx, op):
        names, dt = same_dtype_operands(ctx, op)
        if dt == "bool" and onnx_op != "Equal":  # ONNX orders numbers only
            names = [ctx.node("Cast", [n], to=TensorProto.UINT8) for n in names]
        if name in ("ne", "not_equal"):
            ctx.node("Not", [ctx.node(onnx_op, names)], ctx.y(op))
        else:
            ctx.node(onnx_op, names, ctx.y(op))


def _logical(name, onnx_op):
    @LOWERINGS.register(f"torch.{name}", f"Tensor.{name}")
    def lower(ctx, op):
        if len(op.inputs) != 2:
            raise Unsupported("needs two tensor operands")
        names = [o.name if ctx.dtype(o) == "bool" else as_bool(ctx, o) for o in op.inputs]
        ctx.node(onnx_op, names, ctx.y(op))


for _n, _o in _COMPARE.items():
    _compare(_n, _o)
for _n, _o in _LOGICAL.items():
    _logical(_n, _o)


@LOWERINGS.register("torch.logical_not", "Tensor.logical_not")
def logical_not(ctx, op):
    source = ctx.x(op) if ctx.dtype(op.inputs[0]) == "bool" else as_bool(ctx, op.inputs[0])
    ctx.node("Not", [source], ctx.y(op))


@LOWERINGS.register("torch.bitwise_not", "Tensor.bitwise_not")
def bitwise_not(ctx, op):
    ctx.node("Not" if ctx.dtype(op.inputs[0]) == "bool" else "BitwiseNot", [ctx.x(op)], ctx.y(op))


@LOWERINGS.register("torch.isnan", "Tensor.isnan")
def isnan(ctx, op):
    ctx.node("IsNaN", [ctx.x(op)], ctx.y(op))


@LOWERINGS.register("torch.isinf", "Tensor.isinf")
def isinf(ctx, op):
    ctx.node("IsInf", [ctx.x(op)], ctx.y(op))


@LOWERINGS.register("Tensor.masked_fill", "torch.masked_fill")
def masked_fill(ctx, op):
    mask = op.input("mask", 1)
    if mask is None or "value" not in op.params:
        raise Unsupported("needs a mask operand and a constant value")
    value = ctx.const(op.params["value"], ctx.dtype(op.inputs[0]), "value")
    ctx.node("Where", [mask.name, value, ctx.x(op)], ctx.y(op))


@LOWERINGS.register("torch.where")
def where(ctx, op):
    """torch.where(condition, input, other); `input` or `other` may be a number, in the dtype
    torch promotes the result to (a float scalar with an integer tensor gives a float)."""
    cond = op.input("condition", 0)
    if cond is None or (len(op.inputs) == 1 and "input" not in op.params and "other" not in op.params):
        raise Unsupported("the one-argument form (torch.nonzero's)")
    if len(op.inputs) == 3:
        ctx.node("Where", [o.name for o in op.inputs], ctx.y(op))
        return
    out = ctx.dtype(op.outputs[0])
    branches = []
    for name, position in (("input", 1), ("other", 2)):
        if name in op.params:
            branches.append(ctx.const(op.params[name], out, name))
            continue
        operand = op.input(name, position)
        if operand is None:
            raise Unsupported(f"no {name} operand")
        same = ctx.dtype(operand) == out
        branches.append(operand.name if same else ctx.node("Cast", [operand.name], to=onnx_type(out)))
    ctx.node("Where", [cond.name, *branches], ctx.y(op))


# --- torch.bitwise_left_shift / torch.bitwise_right_shift --------------------------------------
# ONNX BitShift takes unsigned types only. Signed shifts are exact integer arithmetic: x * 2^s
# (wrapping like torch) and floor(x / 2^s), 2^s read from a table so that s == bits-1 wraps too.
# torch gives 0 (left) or the sign fill (right) for a shift outside [0, bits).
_SIGNED_BITS = {"i32": 32, "i64": 64}

_UNSIGNED_BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64}


def _wrapped(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def _floor_div(ctx, x: str, d: str, zero: str, minus_one: str) -> str:
    """floor(x / d) for d > 0 with truncating Div: negative x as -1 - (-1 - x) / d."""
    negative = ctx.node("Sub", [minus_one, ctx.node("Div", [ctx.node("Sub", [minus_one, x]), d])])
    return ctx.node("Where", [ctx.node("Less", [x, zero]), negative, ctx.node("Div", [x, d])])


def _signed_shift(ctx, op, x: str, s: str, bits: int, left: bool) -> None:
    dtype = ctx.dtype(op.outputs[0])
    zero = ctx.const(0, dtype, "zero")
    valid = ctx.node("And", [ctx.node("GreaterOrEqual", [s, zero]),
                           ctx.node("Less", [s, ctx.const(bits, dtype, "bits")])])
    index = ctx.node("Cast", [ctx.node("Where", [valid, s, zero])], to=TensorProto.INT64)
    table = ctx.const([_wrapped(1 << k, bits) for k in range(bits)], dtype, "pow2")
    power = ctx.node("Gather", [table, index], axis=0)
    if left:
        ctx.node("Where", [valid, ctx.node("Mul", [x, power]), zero], ctx.y(op))
        return
    minus_one = ctx.const(-1, dtype, "minus_one")
    fill = ctx.node("Where", [ctx.node("Less", [x, zero]), minus_one, zero])
    ctx.node("Where", [valid, _floor_div(ctx, x, power, zero, minus_one), fill], ctx.y(op))


def _unsigned_shift(ctx, op, x: str, s: str, bits: int, left: bool) -> None:
    """BitShift, with shifts of `bits` or more giving 0 as in torch."""
    dtype = ctx.dtype(op.outputs[0])
    zero = ctx.const(0, dtype, "zero")
    valid = ctx.node("Less", [s, ctx.const(bits, dtype, "bits")])
    shifted = ctx.node("BitShift", [x, ctx.node("Where", [valid, s, zero])],
                     direction="LEFT" if left else "RIGHT")
    ctx.node("Where", [valid, shifted, zero], ctx.y(op))


def _shift(ctx, op, left: bool) -> None:
    dtype = ctx.dtype(op.outputs[0])
    if any(ctx.dtype(o) != dtype for o in op.inputs):
        raise Unsupported("operands of different dtypes")
    other = op.input("other", 1)
    if other is not None:
        s = other.name
    elif isinstance(op.params.get("other"), int):
        s = ctx.const(op.params["other"], dtype, "shift")
    else:
        raise Unsupported("shift amount is neither a tensor nor an integer")
    if dtype in _SIGNED_BITS:
        _signed_shift(ctx, op, ctx.x(op), s, _SIGNED_BITS[dtype], left)
    elif dtype in _UNSIGNED_BITS:
        _unsigned_shift(ctx, op, ctx.x(op), s, _UNSIGNED_BITS[dtype], left)
    else:
        raise Unsupported(f"shift of dtype {dtype}")


@LOWERINGS.register("torch.bitwise_left_shift")
def bitwise_left_shift(ctx, op):
    _shift(ctx, op, left=True)


@LOWERINGS.register("torch.bitwise_right_shift")
def bitwise_right_shift(ctx, op):
    _shift(ctx, op, left=False)
