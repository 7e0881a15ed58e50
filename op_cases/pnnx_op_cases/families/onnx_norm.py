"""ONNX table, the `norm` family (frontends/onnx/rules/norm.py): BatchNormalization,
GroupNormalization, InstanceNormalization, LRN, LayerNormalization, RMSNormalization."""
from __future__ import annotations

from ..builders import Param, rand
from ..onnx_builders import node, onnx_case
from ..registry import family


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
