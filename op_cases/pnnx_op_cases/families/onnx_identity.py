"""ONNX table, the `identity` family (frontends/onnx/rules/identity.py): Dropout."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Dropout")
def dropout():
    op = "onnx.Dropout"
    yield onnx_case(op, "inference", node("Dropout", ["x0"]), [rand(2, 3, 4)], smoke=True)
    yield onnx_case(op, "ratio_input", node("Dropout", ["x0", "r"]), [rand(2, 3, 4)], consts={"r": 0.3}, opset=13)
    yield onnx_case(op, "with_mask", node("Dropout", ["x0"], ["y", "mask"]), [rand(2, 5)], outputs=("y", "mask"),
                    opset=12)
