"""dtype casts: Tensor.to / .type / .float / .int / ... and type_as -> Cast."""
from __future__ import annotations

from ..dtypes import from_torch_name, onnx_type
from ..registry import LOWERINGS


@LOWERINGS.register("Tensor.to", "Tensor.type", "Tensor.float", "Tensor.double", "Tensor.half", "Tensor.int",
                    "Tensor.long", "Tensor.bool")
def cast(ctx, op):
    target = ctx.dtype(op.outputs[0])
    name = op.params.get("dtype")
    if isinstance(name, str) and name.startswith("torch."):
        target = from_torch_name(name)
    ctx.node("Cast", [ctx.x(op)], ctx.y(op), to=onnx_type(target))


@LOWERINGS.register("Tensor.type_as")
def type_as(ctx, op):
    ctx.node("Cast", [ctx.x(op)], ctx.y(op), to=onnx_type(ctx.dtype(op.outputs[0])))
