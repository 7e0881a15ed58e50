"""torch's type promotion for ONNX operands, shared by the elementwise, logic, reduce and
cumulative families: both operands of a binary function in one dtype, casts, and an input in
its output's dtype."""
from __future__ import annotations

from onnx import TensorProto

from ...errors import Unsupported
from .dtypes import FLOATS, onnx_type

# dtypes from narrowest to widest, as torch promotes them
PROMOTION_ORDER = ["bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"]


def as_bool(ctx, operand) -> str:
    return ctx.node("Cast", [operand.name], to=TensorProto.BOOL)


def same_dtype_operands(ctx, op) -> tuple[list[str], str]:
    """Both operands as ONNX values of one dtype (a scalar `other` becomes a constant),
    with torch's promotion for a float scalar against an integer tensor."""
    dtypes = [ctx.dtype(o) for o in op.inputs]
    if len(op.inputs) == 1:
        other = op.params.get("other")
        if other is None or isinstance(other, (str, list)):
            raise Unsupported("needs a second tensor or a scalar `other`")
        dt = dtypes[0] if not (isinstance(other, float) and dtypes[0] not in FLOATS) else "f32"
        return [cast_to(ctx, op.inputs[0], dt), ctx.const(other, dt, "other")], dt
    dt = dtypes[0] if dtypes[0] == dtypes[1] else max(dtypes, key=PROMOTION_ORDER.index)
    return [cast_to(ctx, o, dt) for o in op.inputs], dt


def cast_to(ctx, operand, dtype) -> str:
    if ctx.dtype(operand) == dtype:
        return operand.name
    return ctx.node("Cast", [operand.name], to=onnx_type(dtype))


def in_output_dtype(ctx, op) -> str:
    """The input in the output's dtype: torch sums bools as int64 and honours dtype=."""
    want = ctx.dtype(op.outputs[0])
    if ctx.dtype(op.inputs[0]) == want:
        return ctx.x(op)
    return ctx.node("Cast", [ctx.x(op)], to=onnx_type(want))


# float dtypes as ONNX schemas name them in their type constraints
_SCHEMA_NAMES = {"f16": "tensor(float16)", "bf16": "tensor(bfloat16)", "f32": "tensor(float)", "f64": "tensor(double)"}


def takes(ctx, onnx_op: str, dtype: str) -> bool:
    """Whether `onnx_op`, as defined at the builder's opset, accepts `dtype` (Celu took float32
    only until opset 24, Einsum no bfloat16 until opset 26)."""
    import onnx

    schema = onnx.defs.get_schema(onnx_op, ctx.opset)
    allowed = {t for c in schema.type_constraints for t in c.allowed_type_strs}
    return _SCHEMA_NAMES.get(dtype) in allowed


def float_node(ctx, op, onnx_op: str, inputs: list[str], **attrs) -> str:
    """`onnx_op` on `inputs` into the output operand. A float dtype the operator does not take at
    this opset is computed in float32 and cast back, as torch computes f16 and bf16 (in float)."""
    dtype = ctx.dtype(op.outputs[0])
    if dtype not in _SCHEMA_NAMES or takes(ctx, onnx_op, dtype):
        return ctx.node(onnx_op, inputs, ctx.y(op), **attrs)
    if dtype == "f64":
        raise Unsupported(f"{onnx_op} takes no float64 at opset {ctx.opset}")
    wide = [ctx.node("Cast", [name], to=TensorProto.FLOAT) for name in inputs]
    return ctx.node("Cast", [ctx.node(onnx_op, wide, **attrs)], ctx.y(op), to=onnx_type(dtype))
