"""ONNX table, the `reduce` family (frontends/onnx/rules/reduce.py): ReduceL1, ReduceL2,
ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMean, ReduceMin, ReduceProd, ReduceSum,
ReduceSumSquare."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


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
