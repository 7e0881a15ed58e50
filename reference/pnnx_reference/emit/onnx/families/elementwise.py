"""Elementwise torch functions and Tensor methods that stay standalone operators (most
arithmetic arrives as pnnx.Expression instead, see expression.py): one ONNX operator each,
operands promoted to one dtype as torch does; addcmul."""
from __future__ import annotations

from ....errors import Unsupported
from ..dtypes import onnx_type
from ..promote import same_dtype_operands
from ..registry import LOWERINGS

_UNARY = {"abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "ceil": "Ceil", "floor": "Floor", "round": "Round", "sign": "Sign", "erf": "Erf",
          "reciprocal": "Reciprocal"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "fmod": "Mod"}
_INT_IDENTITY = {"ceil", "floor", "round", "trunc", "fix"}


def _unary(name, onnx_op):
    @LOWERINGS.register(f"torch.{name}", f"Tensor.{name}")
    def lower(ctx, op):
        if name == "round" and op.params.get("decimals", 0):
            raise Unsupported("decimals")
        if name in _INT_IDENTITY and not ctx.is_float(op.inputs[0]):
            ctx.node("Identity", [ctx.x(op)], ctx.y(op))
            return
        ctx.node(onnx_op, [ctx.x(op)], ctx.y(op))


def _binary(name, onnx_op):
    @LOWERINGS.register(f"torch.{name}", f"Tensor.{name}")
    def lower(ctx, op):
        if op.params.get("alpha", 1) != 1:
            raise Unsupported("alpha != 1")
        if name == "div" and op.params.get("rounding_mode") is not None:
            raise Unsupported("rounding_mode")
        names, dt = same_dtype_operands(ctx, op)
        if dt == "bool":
            raise Unsupported(f"{name} on bool tensors")
        attrs = {"fmod": 1} if name == "fmod" else {}
        ctx.node(onnx_op, names, _typed_out(ctx, op, dt), **attrs)
        _cast_out(ctx, op, dt)


def _typed_out(ctx, op, dt):
    return ctx.y(op) if ctx.dtype(op.outputs[0]) == dt else 1


def _cast_out(ctx, op, dt):
    if ctx.dtype(op.outputs[0]) != dt:
        ctx.node("Cast", [ctx.nodes[-1].output[0]], ctx.y(op), to=onnx_type(ctx.dtype(op.outputs[0])))


for _n, _o in _UNARY.items():
    _unary(_n, _o)
for _n, _o in _BINARY.items():
    _binary(_n, _o)


@LOWERINGS.register("torch.addcmul", "Tensor.addcmul")
def addcmul(ctx, op):
    x, t1, t2 = (o.name for o in op.inputs)
    prod = ctx.node("Mul", [t1, t2])
    value = op.params.get("value", 1)
    if value != 1:
        prod = ctx.node("Mul", [prod, ctx.const(value, ctx.dtype(op.inputs[0]), "value")])
    ctx.node("Add", [x, prod], ctx.y(op))
