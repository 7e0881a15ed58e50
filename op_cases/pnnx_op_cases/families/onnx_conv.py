"""ONNX table, the `conv` family (frontends/onnx/rules/conv.py): Conv, ConvTranspose."""
from __future__ import annotations

from ..builders import Param, rand
from ..onnx_builders import node, onnx_case
from ..registry import family


W = Param((8, 3, 3, 3), -0.5, 0.5)


@family("onnx.Conv")
def conv():
    op = "onnx.Conv"
    yield onnx_case(op, "k3_p1", node("Conv", ["x0", "W", "B"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                    [rand(1, 3, 8, 8)], params={"W": W, "B": (8,)}, smoke=True)
    yield onnx_case(op, "s2_nobias", node("Conv", ["x0", "W"], strides=[2, 2]), [rand(1, 3, 9, 9)],
                    params={"W": W}, opset=11)
    yield onnx_case(op, "same_upper_s2", node("Conv", ["x0", "W", "B"], auto_pad="SAME_UPPER", strides=[2, 2]),
                    [rand(1, 3, 8, 8)], params={"W": W, "B": (8,)})
    yield onnx_case(op, "asymmetric_pads", node("Conv", ["x0", "W"], pads=[0, 1, 2, 1]), [rand(1, 3, 7, 7)],
                    params={"W": W})
    yield onnx_case(op, "group_dilation", node("Conv", ["x0", "W", "B"], group=2, dilations=[2, 2], pads=[2, 2, 2, 2]),
                    [rand(1, 4, 9, 9)], params={"W": Param((6, 2, 3, 3), -0.5, 0.5), "B": (6,)})
    yield onnx_case(op, "1d", node("Conv", ["x0", "W", "B"], pads=[1, 1]), [rand(2, 3, 10)],
                    params={"W": Param((4, 3, 3), -0.5, 0.5), "B": (4,)})
    yield onnx_case(op, "3d", node("Conv", ["x0", "W"], strides=[1, 2, 2]), [rand(1, 2, 4, 6, 6)],
                    params={"W": Param((3, 2, 2, 3, 3), -0.5, 0.5)}, opset=22)
    yield onnx_case(op, "weight_input", node("Conv", ["x0", "x1"]), [rand(1, 3, 6, 6), rand(4, 3, 3, 3)])
    yield onnx_case(op, "dynamic_batch", node("Conv", ["x0", "W", "B"], pads=[1, 1, 1, 1]), [rand(2, 3, 8, 8)],
                    params={"W": W, "B": (8,)}, dims={0: {0: "N"}})


@family("onnx.ConvTranspose")
def conv_transpose():
    op = "onnx.ConvTranspose"
    w = Param((3, 4, 3, 3), -0.5, 0.5)
    yield onnx_case(op, "s2_p1", node("ConvTranspose", ["x0", "W", "B"], strides=[2, 2], pads=[1, 1, 1, 1]),
                    [rand(1, 3, 5, 5)], params={"W": w, "B": (4,)}, smoke=True)
    yield onnx_case(op, "output_padding", node("ConvTranspose", ["x0", "W"], strides=[2, 2], output_padding=[1, 1]),
                    [rand(1, 3, 4, 4)], params={"W": w}, opset=11)
    yield onnx_case(op, "output_shape", node("ConvTranspose", ["x0", "W"], strides=[2, 2], output_shape=[10, 10]),
                    [rand(1, 3, 5, 5)], params={"W": w})
    yield onnx_case(op, "same_upper", node("ConvTranspose", ["x0", "W"], strides=[2, 2], auto_pad="SAME_UPPER"),
                    [rand(1, 3, 4, 4)], params={"W": w})
    yield onnx_case(op, "asymmetric_pads", node("ConvTranspose", ["x0", "W"], strides=[2, 2], pads=[0, 1, 1, 0]),
                    [rand(1, 3, 4, 4)], params={"W": w})
    yield onnx_case(op, "group_1d", node("ConvTranspose", ["x0", "W", "B"], group=2), [rand(1, 4, 6)],
                    params={"W": Param((4, 3, 3), -0.5, 0.5), "B": (6,)}, opset=22)
