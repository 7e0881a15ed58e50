"""ONNX table, the `resize` family (frontends/onnx/rules/resize.py): Resize, Upsample."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Resize")
def resize():
    op = "onnx.Resize"
    scales2 = {"sc": [1.0, 1.0, 2.0, 2.0]}
    yield onnx_case(op, "nearest_scales", node("Resize", ["x0", "", "sc"], mode="nearest",
                                               coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
                    [rand(1, 2, 4, 5)], consts=scales2, smoke=True)
    yield onnx_case(op, "linear_half_pixel", node("Resize", ["x0", "", "sc"], mode="linear"), [rand(1, 2, 4, 5)],
                    consts=scales2)
    yield onnx_case(op, "linear_align_corners_sizes", node("Resize", ["x0", "", "", "sz"], mode="linear",
                                                           coordinate_transformation_mode="align_corners"),
                    [rand(1, 2, 4, 5)], consts={"sz": [1, 2, 7, 9]}, opset=13)
    yield onnx_case(op, "cubic_opset11", node("Resize", ["x0", "roi", "sc"], mode="cubic"), [rand(1, 2, 4, 4)],
                    consts={"roi": [], "sc": [1.0, 1.0, 2.0, 2.0]}, const_dtypes={"roi": "torch.float32"}, opset=11)
    yield onnx_case(op, "nearest_default_down", node("Resize", ["x0", "", "sc"]), [rand(1, 2, 8, 8)],
                    consts={"sc": [1.0, 1.0, 0.5, 0.5]})
    yield onnx_case(op, "nearest_ceil_half_pixel", node("Resize", ["x0", "", "", "sz"], nearest_mode="ceil"),
                    [rand(1, 1, 3, 4)], consts={"sz": [1, 1, 7, 6]}, opset=13)
    yield onnx_case(op, "linear_antialias_opset18", node("Resize", ["x0", "", "sc"], mode="linear", antialias=1),
                    [rand(1, 2, 8, 8)], consts={"sc": [1.0, 1.0, 0.5, 0.5]}, opset=18)
    yield onnx_case(op, "axes_opset18", node("Resize", ["x0", "", "sc"], mode="linear", axes=[2, 3]),
                    [rand(1, 2, 4, 4)], consts={"sc": [2.0, 1.5]}, opset=18)
    yield onnx_case(op, "linear_asymmetric", node("Resize", ["x0", "", "sc"], mode="linear",
                                                  coordinate_transformation_mode="asymmetric"),
                    [rand(1, 2, 3, 4)], consts=scales2, opset=19)
    yield onnx_case(op, "linear_1d", node("Resize", ["x0", "", "sc"], mode="linear"), [rand(1, 3, 6)],
                    consts={"sc": [1.0, 1.0, 2.0]})


@family("onnx.Upsample")
def upsample():
    op = "onnx.Upsample"
    yield onnx_case(op, "nearest_opset9", node("Upsample", ["x0", "sc"]), [rand(1, 2, 3, 4)],
                    consts={"sc": [1.0, 1.0, 2.0, 2.0]}, opset=9, smoke=True)
    yield onnx_case(op, "linear_opset9", node("Upsample", ["x0", "sc"], mode="linear"), [rand(1, 2, 3, 4)],
                    consts={"sc": [1.0, 1.0, 2.0, 3.0]}, opset=9)
    yield onnx_case(op, "nearest_attr_opset7", node("Upsample", ["x0"], scales=[1.0, 1.0, 3.0, 2.0]),
                    [rand(1, 2, 3, 4)], opset=7)
