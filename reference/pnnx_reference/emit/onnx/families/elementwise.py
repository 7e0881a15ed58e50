"""Element-wise torch functions and Tensor methods that stay standalone operators
(most arithmetic arrives as pnnx.Expression instead)."""
from __future__ import annotations

from ..registry import Unsupported, lowering

_UNARY = {"abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "ceil": "Ceil", "floor": "Floor", "round": "Round", "sign": "Sign", "erf": "Erf",
          "reciprocal": "Reciprocal", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "eq": "Equal", "gt": "Greater", "lt": "Less",
           "ge": "GreaterOrEqual", "le": "LessOrEqual", "logical_and": "And",
           "logical_or": "Or", "logical_xor": "Xor", "fmod": "Mod"}


def _unary(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if name == "round" and op.params.get("decimals", 0):
            raise Unsupported("decimals")
        b.node(onnx_op, [b.x(op)], b.y(op))


def _binary(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if len(op.inputs) != 2 or op.params.get("alpha", 1) != 1:
            raise Unsupported("needs two tensor operands (and alpha=1)")
        if name == "div" and op.params.get("rounding_mode") is not None:
            raise Unsupported("rounding_mode")
        attrs = {"fmod": 1} if name == "fmod" else {}
        b.node(onnx_op, [o.name for o in op.inputs], b.y(op), **attrs)


for _n, _o in _UNARY.items():
    _unary(_n, _o)
for _n, _o in _BINARY.items():
    _binary(_n, _o)


@lowering("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip")
def clamp(b, op):
    if len(op.inputs) > 1:
        raise Unsupported("tensor min/max")
    dt = b.dtype(op.inputs[0])
    bounds = [op.params.get("min"), op.params.get("max")]
    inputs = [b.x(op)] + ["" if v is None else b.const(v, dt, "bound") for v in bounds]
    while inputs[-1] == "":
        inputs.pop()
    b.node("Clip", inputs, b.y(op))
