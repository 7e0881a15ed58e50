"""ONNX table, the `pool` family (frontends/onnx/rules/pool.py): AveragePool, GlobalAveragePool,
GlobalMaxPool, MaxPool."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.MaxPool")
def max_pool():
    op = "onnx.MaxPool"
    yield onnx_case(op, "k2_s2", node("MaxPool", ["x0"], kernel_shape=[2, 2], strides=[2, 2]), [rand(1, 3, 8, 8)],
                    smoke=True)
    yield onnx_case(op, "k3_p1_ceil", node("MaxPool", ["x0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                           ceil_mode=1), [rand(1, 2, 8, 8)], opset=12)
    yield onnx_case(op, "same_upper", node("MaxPool", ["x0"], kernel_shape=[3, 3], strides=[2, 2],
                                           auto_pad="SAME_UPPER"), [rand(1, 2, 7, 7)], opset=11)
    yield onnx_case(op, "1d_dilation", node("MaxPool", ["x0"], kernel_shape=[2], dilations=[2]), [rand(2, 3, 9)],
                    opset=22)
    yield onnx_case(op, "3d", node("MaxPool", ["x0"], kernel_shape=[2, 2, 2]), [rand(1, 2, 4, 4, 4)])
    yield onnx_case(op, "indices", node("MaxPool", ["x0"], ["y", "idx"], kernel_shape=[2, 2], strides=[2, 2]),
                    [rand(2, 3, 4, 4)], outputs=("y", "idx"))


@family("onnx.AveragePool")
def average_pool():
    op = "onnx.AveragePool"
    yield onnx_case(op, "k2_s2", node("AveragePool", ["x0"], kernel_shape=[2, 2], strides=[2, 2]), [rand(1, 3, 8, 8)],
                    smoke=True)
    yield onnx_case(op, "k3_p1_count_pad", node("AveragePool", ["x0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                                count_include_pad=1), [rand(1, 2, 6, 6)], opset=11)
    yield onnx_case(op, "k3_p1_exclude_pad", node("AveragePool", ["x0"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                    [rand(1, 2, 6, 6)])
    yield onnx_case(op, "ceil", node("AveragePool", ["x0"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
                    [rand(1, 2, 8, 8)], opset=19)
    yield onnx_case(op, "1d", node("AveragePool", ["x0"], kernel_shape=[3], strides=[2]), [rand(2, 3, 9)])
    yield onnx_case(op, "3d", node("AveragePool", ["x0"], kernel_shape=[2, 2, 2]), [rand(1, 2, 4, 4, 4)], opset=22)


@family("onnx.GlobalAveragePool")
def global_average_pool():
    op = "onnx.GlobalAveragePool"
    yield onnx_case(op, "2d", node("GlobalAveragePool", ["x0"]), [rand(1, 8, 5, 6)], smoke=True)
    yield onnx_case(op, "1d", node("GlobalAveragePool", ["x0"]), [rand(2, 4, 9)], opset=11)
    yield onnx_case(op, "3d", node("GlobalAveragePool", ["x0"]), [rand(1, 2, 3, 4, 5)], opset=22)


@family("onnx.GlobalMaxPool")
def global_max_pool():
    op = "onnx.GlobalMaxPool"
    yield onnx_case(op, "2d", node("GlobalMaxPool", ["x0"]), [rand(1, 8, 5, 6)], smoke=True)
    yield onnx_case(op, "1d", node("GlobalMaxPool", ["x0"]), [rand(2, 4, 9)], opset=11)
