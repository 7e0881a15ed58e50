"""ONNX table: layers with weights (Conv, ConvTranspose, Gemm, MatMul) and normalizations."""
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


@family("onnx.Gemm")
def gemm():
    op = "onnx.Gemm"
    yield onnx_case(op, "linear", node("Gemm", ["x0", "W", "B"], transB=1), [rand(2, 16)],
                    params={"W": (10, 16), "B": (10,)}, smoke=True)
    yield onnx_case(op, "no_trans_alpha_beta", node("Gemm", ["x0", "W", "B"], alpha=0.5, beta=2.0), [rand(3, 8)],
                    params={"W": (8, 5), "B": (1, 5)}, opset=11)
    yield onnx_case(op, "no_bias", node("Gemm", ["x0", "W"], transB=1), [rand(2, 6)], params={"W": (4, 6)})
    yield onnx_case(op, "matrix_bias", node("Gemm", ["x0", "W", "B"]), [rand(3, 6)], params={"W": (6, 4), "B": (3, 4)})
    yield onnx_case(op, "inputs", node("Gemm", ["x0", "x1", "x2"], transA=1), [rand(6, 3), rand(6, 4), rand(4)])


@family("onnx.MatMul")
def matmul():
    op = "onnx.MatMul"
    yield onnx_case(op, "weight_3d", node("MatMul", ["x0", "W"]), [rand(2, 5, 16)], params={"W": (16, 8)}, smoke=True)
    yield onnx_case(op, "matmul_add", [node("MatMul", ["x0", "W"], "t"), node("Add", ["t", "B"])], [rand(2, 5, 16)],
                    params={"W": (16, 8), "B": (8,)})
    yield onnx_case(op, "batched", node("MatMul", ["x0", "x1"]), [rand(2, 3, 4, 5), rand(2, 3, 5, 6)], opset=11)
    yield onnx_case(op, "broadcast", node("MatMul", ["x0", "x1"]), [rand(2, 3, 4, 5), rand(5, 2)])
    yield onnx_case(op, "vector", node("MatMul", ["x0", "x1"]), [rand(5), rand(5, 3)])


def _stats_params(c: int) -> dict:
    return {"scale": Param((c,), 0.5, 1.5), "bias": Param((c,), -0.5, 0.5), "mean": Param((c,), -0.5, 0.5),
            "var": Param((c,), 0.5, 1.5)}


@family("onnx.BatchNormalization")
def batch_normalization():
    op = "onnx.BatchNormalization"
    inputs = ["x0", "scale", "bias", "mean", "var"]
    yield onnx_case(op, "2d", node("BatchNormalization", inputs), [rand(1, 4, 5, 6)], params=_stats_params(4),
                    smoke=True)
    yield onnx_case(op, "1d_eps", node("BatchNormalization", inputs, epsilon=0.01), [rand(3, 4)],
                    params=_stats_params(4), opset=9)
    yield onnx_case(op, "3d_opset15", node("BatchNormalization", inputs), [rand(1, 4, 2, 3, 4)],
                    params=_stats_params(4), opset=15)
    yield onnx_case(op, "seq", node("BatchNormalization", inputs), [rand(2, 4, 7)], params=_stats_params(4), opset=14)


@family("onnx.InstanceNormalization")
def instance_normalization():
    op = "onnx.InstanceNormalization"
    params = {"scale": Param((3,), 0.5, 1.5), "bias": (3,)}
    yield onnx_case(op, "2d", node("InstanceNormalization", ["x0", "scale", "bias"]), [rand(2, 3, 5, 6)],
                    params=params, smoke=True)
    yield onnx_case(op, "1d_eps", node("InstanceNormalization", ["x0", "scale", "bias"], epsilon=0.01),
                    [rand(1, 3, 9)], params=params, opset=11)
    yield onnx_case(op, "3d", node("InstanceNormalization", ["x0", "scale", "bias"]), [rand(1, 3, 2, 3, 4)],
                    params=params, opset=22)


@family("onnx.LayerNormalization")
def layer_normalization():
    op = "onnx.LayerNormalization"
    yield onnx_case(op, "last", node("LayerNormalization", ["x0", "scale", "bias"]), [rand(2, 5, 16)],
                    params={"scale": Param((16,), 0.5, 1.5), "bias": (16,)}, opset=17, smoke=True)
    yield onnx_case(op, "axis_m2_eps", node("LayerNormalization", ["x0", "scale", "bias"], axis=-2, epsilon=0.01),
                    [rand(2, 4, 6)], params={"scale": Param((4, 6), 0.5, 1.5), "bias": (4, 6)}, opset=17)
    yield onnx_case(op, "no_bias", node("LayerNormalization", ["x0", "scale"]), [rand(3, 8)],
                    params={"scale": Param((8,), 0.5, 1.5)}, opset=17)
    yield onnx_case(op, "statistics", node("LayerNormalization", ["x0", "scale", "bias"], ["y", "mean", "inv_std"]),
                    [rand(2, 3, 8)], params={"scale": Param((8,), 0.5, 1.5), "bias": (8,)}, opset=17,
                    outputs=("y", "mean", "inv_std"))


@family("onnx.GroupNormalization")
def group_normalization():
    op = "onnx.GroupNormalization"
    yield onnx_case(op, "g2_opset21", node("GroupNormalization", ["x0", "scale", "bias"], num_groups=2),
                    [rand(2, 4, 5, 5)], params={"scale": Param((4,), 0.5, 1.5), "bias": (4,)}, opset=21, smoke=True)
    # opset 18 scales and shifts per group, not per channel
    yield onnx_case(op, "g2_opset18", node("GroupNormalization", ["x0", "scale", "bias"], num_groups=2,
                                           epsilon=0.01),
                    [rand(1, 6, 4, 4)], params={"scale": Param((2,), 0.5, 1.5), "bias": (2,)}, opset=18)


@family("onnx.RMSNormalization")
def rms_normalization():
    op = "onnx.RMSNormalization"
    yield onnx_case(op, "last", node("RMSNormalization", ["x0", "scale"]), [rand(2, 5, 16)],
                    params={"scale": Param((16,), 0.5, 1.5)}, opset=23, smoke=True)
    yield onnx_case(op, "axis_m2", node("RMSNormalization", ["x0", "scale"], axis=-2, epsilon=0.001),
                    [rand(2, 4, 6)], params={"scale": Param((4, 6), 0.5, 1.5)}, opset=23)


@family("onnx.LRN")
def lrn():
    op = "onnx.LRN"
    yield onnx_case(op, "size3", node("LRN", ["x0"], size=3), [rand(1, 6, 4, 4)], smoke=True)
    yield onnx_case(op, "size5_params", node("LRN", ["x0"], size=5, alpha=0.001, beta=0.5, bias=2.0),
                    [rand(2, 8, 3, 3)], opset=13)
