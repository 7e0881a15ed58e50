"""ONNX table, the `creation` family (frontends/onnx/rules/creation.py): Constant."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import Code, node, onnx_case
from ..registry import family


@family("onnx.Constant")
def constant():
    op = "onnx.Constant"
    tensor = Code("helper.make_tensor('c', 1, [2, 1], [0.5, -1.5])")
    yield onnx_case(op, "tensor", [node("Constant", [], "c", value=tensor), node("Add", ["x0", "c"])],
                    [rand(2, 3)], smoke=True)
    yield onnx_case(op, "value_floats_opset12", [node("Constant", [], "c", value_floats=[0.5, 1.5, 2.5]),
                                                 node("Mul", ["x0", "c"])], [rand(2, 3)], opset=12)
    yield onnx_case(op, "value_float", [node("Constant", [], "c", value_float=2.0), node("Sub", ["x0", "c"])],
                    [rand(2, 3)])
    yield onnx_case(op, "value_ints_shape", [node("Constant", [], "s", value_ints=[3, 2]), node("Reshape", ["x0", "s"])],
                    [rand(2, 3)], opset=21)
