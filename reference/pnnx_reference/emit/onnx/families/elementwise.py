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
    def lower(b, op):
        if name == "round" and op.params.get("decimals", 0):
            raise Unsupported("decimals")
        if name in _INT_IDENTITY and not b.is_float(op.inputs[0]):
            b.node("Identity", [b.x(op)], b.y(op))
            return
        b.node(onnx_op, [b.x(op)], b.y(op))


def _binary(name, onnx_op):
    @LOWERINGS.register(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if op.params.get("alpha", 1) != 1:
            raise Unsupported("alpha != 1")
        if name == "div" and op.params.get("rounding_mode") is not None:
            raise Unsupported("rounding_mode")
        names, dt = same_dtype_operands(b, op)
        if dt == "bool":
            raise Unsupported(f"{name} on bool tensors")
        attrs = {"fmod": 1} if name == "fmod" else {}
        b.node(onnx_op, names, _typed_out(b, op, dt), **attrs)
        _cast_out(b, op, dt)


def _typed_out(b, op, dt):
    return b.y(op) if b.dtype(op.outputs[0]) == dt else 1


def _cast_out(b, op, dt):
    if b.dtype(op.outputs[0]) != dt:
        b.node("Cast", [b.nodes[-1].output[0]], b.y(op), to=onnx_type(b.dtype(op.outputs[0])))


for _n, _o in _UNARY.items():
    _unary(_n, _o)
for _n, _o in _BINARY.items():
    _binary(_n, _o)


@LOWERINGS.register("torch.addcmul", "Tensor.addcmul")
def addcmul(b, op):
    x, t1, t2 = (o.name for o in op.inputs)
    prod = b.node("Mul", [t1, t2])
    value = op.params.get("value", 1)
    if value != 1:
        prod = b.node("Mul", [prod, b.const(value, b.dtype(op.inputs[0]), "value")])
    b.node("Add", [x, prod], b.y(op))
