"""dtype casts: Tensor.to / .type / .float / .int / ... and type_as -> Cast."""
from __future__ import annotations

from ..dtypes import from_torch_name, onnx_type
from ..registry import LOWERINGS


@LOWERINGS.register("Tensor.to", "Tensor.type", "Tensor.float", "Tensor.double", "Tensor.half", "Tensor.int",
                    "Tensor.long", "Tensor.bool")
def cast(b, op):
    target = b.dtype(op.outputs[0])
    name = op.params.get("dtype")
    if isinstance(name, str) and name.startswith("torch."):
        target = from_torch_name(name)
    b.node("Cast", [b.x(op)], b.y(op), to=onnx_type(target))


@LOWERINGS.register("Tensor.type_as")
def type_as(b, op):
    b.node("Cast", [b.x(op)], b.y(op), to=onnx_type(b.dtype(op.outputs[0])))
