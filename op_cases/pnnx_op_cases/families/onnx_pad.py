"""ONNX table, the `pad` family (frontends/onnx/rules/pad.py): Pad."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Pad")
def pad():
    op = "onnx.Pad"
    yield onnx_case(op, "constant", node("Pad", ["x0", "p", "v"]), [rand(1, 2, 3, 4)],
                    consts={"p": [0, 0, 1, 2, 0, 0, 2, 1], "v": 0.5}, smoke=True)
    yield onnx_case(op, "reflect_opset11", node("Pad", ["x0", "p"], mode="reflect"), [rand(1, 2, 4, 5)],
                    consts={"p": [0, 0, 1, 2, 0, 0, 2, 1]}, opset=11)
    yield onnx_case(op, "edge", node("Pad", ["x0", "p"], mode="edge"), [rand(1, 2, 4, 5)],
                    consts={"p": [0, 0, 2, 1, 0, 0, 0, 3]})
    yield onnx_case(op, "wrap_opset19", node("Pad", ["x0", "p"], mode="wrap"), [rand(1, 2, 4, 5)],
                    consts={"p": [0, 0, 1, 1, 0, 0, 1, 2]}, opset=19)
    yield onnx_case(op, "axes_opset18", node("Pad", ["x0", "p", "", "ax"]), [rand(2, 3, 4)],
                    consts={"p": [1, 2, 0, 3], "ax": [1, -1]}, opset=18)
    yield onnx_case(op, "crop", node("Pad", ["x0", "p"]), [rand(2, 6, 6)], consts={"p": [0, -1, -2, 0, 1, 0]})
