"""Element-wise torch functions and Tensor methods that stay standalone operators
(most arithmetic arrives as pnnx.Expression instead)."""
from __future__ import annotations

from onnx import TensorProto

from ..dtypes import FLOATS, onnx_type
from ..registry import Unsupported, lowering

_RANK = ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"]

_UNARY = {"abs": "Abs", "neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "ceil": "Ceil", "floor": "Floor", "round": "Round", "sign": "Sign", "erf": "Erf",
          "reciprocal": "Reciprocal", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf",
          "bitwise_not": "BitwiseNot", "positive": "Identity"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "fmod": "Mod"}
_COMPARE = {"eq": "Equal", "gt": "Greater", "lt": "Less", "ge": "GreaterOrEqual",
            "le": "LessOrEqual", "ne": "Equal", "greater": "Greater", "less": "Less",
            "greater_equal": "GreaterOrEqual", "less_equal": "LessOrEqual", "not_equal": "Equal"}
_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}
_INT_IDENTITY = {"ceil", "floor", "round", "trunc", "fix"}


def _unary(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if name == "round" and op.params.get("decimals", 0):
            raise Unsupported("decimals")
        if name in _INT_IDENTITY and not b.is_float(op.inputs[0]):
            b.node("Identity", [b.x(op)], b.y(op))
            return
        source, kind = b.x(op), onnx_op
        if onnx_op == "Not" and b.dtype(op.inputs[0]) != "bool":
            source = _as_bool(b, op.inputs[0])
        if onnx_op == "BitwiseNot" and b.dtype(op.inputs[0]) == "bool":
            kind = "Not"
        b.node(kind, [source], b.y(op))


def _as_bool(b, operand) -> str:
    return b.node("Cast", [operand.name], to=TensorProto.BOOL)


def _operands(b, op) -> tuple[list[str], str]:
    """Both operands as ONNX values of one dtype (a scalar `other` becomes a constant),
    with torch's promotion for a float scalar against an integer tensor."""
    dtypes = [b.dtype(o) for o in op.inputs]
    if len(op.inputs) == 1:
        other = op.params.get("other")
        if other is None or isinstance(other, (str, list)):
            raise Unsupported("needs a second tensor or a scalar `other`")
        dt = dtypes[0] if not (isinstance(other, float) and dtypes[0] not in FLOATS) else "f32"
        return [_cast(b, op.inputs[0], dt), b.const(other, dt, "other")], dt
    dt = dtypes[0] if dtypes[0] == dtypes[1] else max(dtypes, key=_RANK.index)
    return [_cast(b, o, dt) for o in op.inputs], dt


def _cast(b, operand, dtype) -> str:
    if b.dtype(operand) == dtype:
        return operand.name
    return b.node("Cast", [operand.name], to=onnx_type(dtype))


def _compare(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        names, dt = _operands(b, op)
        if dt == "bool" and onnx_op != "Equal":  # ONNX orders numbers only
            names = [b.node("Cast", [n], to=TensorProto.UINT8) for n in names]
        if name in ("ne", "not_equal"):
            b.node("Not", [b.node(onnx_op, names)], b.y(op))
        else:
            b.node(onnx_op, names, b.y(op))


def _logical(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if len(op.inputs) != 2:
            raise Unsupported("needs two tensor operands")
        names = [o.name if b.dtype(o) == "bool" else _as_bool(b, o) for o in op.inputs]
        b.node(onnx_op, names, b.y(op))


def _binary(name, onnx_op):
    @lowering(f"torch.{name}", f"Tensor.{name}")
    def lower(b, op):
        if op.params.get("alpha", 1) != 1:
            raise Unsupported("alpha != 1")
        if name == "div" and op.params.get("rounding_mode") is not None:
            raise Unsupported("rounding_mode")
        names, dt = _operands(b, op)
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
for _n, _o in _COMPARE.items():
    _compare(_n, _o)
for _n, _o in _LOGICAL.items():
    _logical(_n, _o)


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


@lowering("torch.addcmul", "Tensor.addcmul")
def addcmul(b, op):
    x, t1, t2 = (o.name for o in op.inputs)
    prod = b.node("Mul", [t1, t2])
    value = op.params.get("value", 1)
    if value != 1:
        prod = b.node("Mul", [prod, b.const(value, b.dtype(op.inputs[0]), "value")])
    b.node("Add", [x, prod], b.y(op))


@lowering("torch.triu", "Tensor.triu", "torch.tril", "Tensor.tril")
def trilu(b, op):
    k = b.const(int(op.params.get("diagonal", 0)), hint="k")
    b.node("Trilu", [b.x(op), k], b.y(op), upper=int(op.type.endswith("triu")))
