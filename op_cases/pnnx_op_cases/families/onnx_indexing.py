"""ONNX table, the `indexing` family (frontends/onnx/rules/indexing.py): Slice."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Slice")
def slice_():
    op = "onnx.Slice"
    yield onnx_case(op, "axes_steps", node("Slice", ["x0", "st", "en", "ax", "sp"]), [rand(4, 10, 6)],
                    consts={"st": [1, 0], "en": [9, 5], "ax": [1, 2], "sp": [2, 1]}, smoke=True)
    yield onnx_case(op, "to_end", node("Slice", ["x0", "st", "en"]), [rand(5, 6)],
                    consts={"st": [1], "en": [9223372036854775807]}, opset=11)
    yield onnx_case(op, "negative", node("Slice", ["x0", "st", "en", "ax"]), [rand(5, 6)],
                    consts={"st": [-3], "en": [-1], "ax": [-1]})
    yield onnx_case(op, "reverse", node("Slice", ["x0", "st", "en", "ax", "sp"]), [rand(3, 8)],
                    consts={"st": [-1], "en": [-9223372036854775807], "ax": [1], "sp": [-2]})
    yield onnx_case(op, "clamped", node("Slice", ["x0", "st", "en", "ax"]), [rand(3, 8)],
                    consts={"st": [-100], "en": [100], "ax": [0]})
