"""ONNX table: pooling and reductions (axes as an attribute, or an input from opset 18 / 13)."""
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


_AXES_INPUT = {"ReduceSum": 13}


def _reduce(op_type: str, low: float = -1.0, high: float = 1.0):
    """axes [1] keepdims / [-1, 0] dropped / every axis, in the attribute form (opset 13) and
    the input form (opset 18; 13 for ReduceSum), plus noop_with_empty_axes."""
    op = f"onnx.{op_type}"
    since = _AXES_INPUT.get(op_type, 18)
    old = 11 if since == 13 else 13

    def case(variant, axes, opset, keepdims=1, smoke=False, **attrs):
        if opset >= since and axes is not None:
            n = node(op_type, ["x0", "axes"], keepdims=keepdims, **attrs)
            return onnx_case(op, variant, n, [rand(2, 3, 4, low=low, high=high)], consts={"axes": axes}, opset=opset,
                             smoke=smoke)
        extra = {"axes": axes} if axes is not None else {}
        return onnx_case(op, variant, node(op_type, ["x0"], keepdims=keepdims, **extra, **attrs),
                         [rand(2, 3, 4, low=low, high=high)], opset=opset, smoke=smoke)

    yield case("axis1_keep", [1], since, smoke=True)
    yield case(f"axes_m1_0_opset{old}", [-1, 0], old, keepdims=0)
    yield case("all", None, since, keepdims=0)
    yield case(f"all_keep_opset{old}", None, old)
    yield case("axes_m1_0", [-1, 0], since, keepdims=0)
    yield onnx_case(op, "noop_empty_axes", node(op_type, ["x0"], noop_with_empty_axes=1),
                    [rand(2, 3, low=low, high=high)], opset=since)


@family("onnx.ReduceMean")
def reduce_mean():
    yield from _reduce("ReduceMean")


@family("onnx.ReduceSum")
def reduce_sum():
    yield from _reduce("ReduceSum")


@family("onnx.ReduceMax")
def reduce_max():
    yield from _reduce("ReduceMax")


@family("onnx.ReduceMin")
def reduce_min():
    yield from _reduce("ReduceMin")


@family("onnx.ReduceProd")
def reduce_prod():
    yield from _reduce("ReduceProd", 0.5, 1.5)


@family("onnx.ReduceL1")
def reduce_l1():
    yield from _reduce("ReduceL1")


@family("onnx.ReduceL2")
def reduce_l2():
    yield from _reduce("ReduceL2")


@family("onnx.ReduceLogSum")
def reduce_log_sum():
    yield from _reduce("ReduceLogSum", 0.1, 1.0)


@family("onnx.ReduceLogSumExp")
def reduce_log_sum_exp():
    yield from _reduce("ReduceLogSumExp")


@family("onnx.ReduceSumSquare")
def reduce_sum_square():
    yield from _reduce("ReduceSumSquare")
