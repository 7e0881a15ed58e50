"""ONNX table: elementwise math (unary, binary with broadcasting and constants, variadic) and Clip."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


def _unary(op_type: str, low: float = -1.0, high: float = 1.0, smoke: bool = True):
    op = f"onnx.{op_type}"
    yield onnx_case(op, "r4", node(op_type, ["x0"]), [rand(1, 3, 4, 5, low=low, high=high)], smoke=smoke)
    yield onnx_case(op, "r2_opset11", node(op_type, ["x0"]), [rand(6, 7, low=low, high=high)], opset=11)


@family("onnx.Abs")
def abs_():
    yield from _unary("Abs")


@family("onnx.Acos")
def acos():
    yield from _unary("Acos", -0.99, 0.99)


@family("onnx.Asin")
def asin():
    yield from _unary("Asin", -0.99, 0.99)


@family("onnx.Atan")
def atan():
    yield from _unary("Atan", -3.0, 3.0)


@family("onnx.Ceil")
def ceil():
    yield from _unary("Ceil", -3.0, 3.0)


@family("onnx.Cos")
def cos():
    yield from _unary("Cos", -3.0, 3.0)


@family("onnx.Erf")
def erf():
    yield from _unary("Erf", -2.0, 2.0)


@family("onnx.Exp")
def exp():
    yield from _unary("Exp", -3.0, 3.0)


@family("onnx.Floor")
def floor():
    yield from _unary("Floor", -3.0, 3.0)


@family("onnx.Log")
def log():
    yield from _unary("Log", 0.1, 4.0)


@family("onnx.Neg")
def neg():
    yield from _unary("Neg")


@family("onnx.Reciprocal")
def reciprocal():
    yield from _unary("Reciprocal", 0.5, 2.0)


@family("onnx.Sin")
def sin():
    yield from _unary("Sin", -3.0, 3.0)


@family("onnx.Sqrt")
def sqrt():
    yield from _unary("Sqrt", 0.0, 4.0)


@family("onnx.Tan")
def tan():
    yield from _unary("Tan", -1.2, 1.2)


def _binary(op_type: str, low: float = -1.0, high: float = 1.0, divisor: bool = False):
    op = f"onnx.{op_type}"
    b_low = 0.5 if divisor else low
    yield onnx_case(op, "same", node(op_type, ["x0", "x1"]),
                    [rand(1, 3, 4, 5, low=low, high=high), rand(1, 3, 4, 5, low=b_low, high=high)], smoke=True)
    yield onnx_case(op, "bcast", node(op_type, ["x0", "x1"]),
                    [rand(2, 3, 4, 5, low=low, high=high), rand(4, 1, low=b_low, high=high)])
    yield onnx_case(op, "scalar_const", node(op_type, ["x0", "c"]), [rand(2, 6, low=low, high=high)],
                    consts={"c": 1.5}, opset=11)
    yield onnx_case(op, "channel_const", node(op_type, ["x0", "c"]), [rand(1, 3, 4, 4, low=low, high=high)],
                    consts={"c": [[[0.5]], [[1.5]], [[2.0]]]})
    yield onnx_case(op, "const_first", node(op_type, ["c", "x0"]), [rand(2, 5, low=b_low, high=high)],
                    consts={"c": 2.0})


@family("onnx.Add")
def add():
    yield from _binary("Add")
    yield onnx_case("onnx.Add", "i64", node("Add", ["x0", "x1"]), [rand(2, 3, dtype="i64", low=-5, high=5),
                                                                     rand(2, 3, dtype="i64", low=-5, high=5)])


@family("onnx.Sub")
def sub():
    yield from _binary("Sub")


@family("onnx.Mul")
def mul():
    yield from _binary("Mul")


@family("onnx.Div")
def div():
    yield from _binary("Div", divisor=True)
    yield onnx_case("onnx.Div", "i32_trunc", node("Div", ["x0", "x1"]),
                    [rand(2, 6, dtype="i32", low=-20, high=20), rand(2, 6, dtype="i32", low=1, high=7)])


@family("onnx.Pow")
def pow_():
    op = "onnx.Pow"
    yield onnx_case(op, "same", node("Pow", ["x0", "x1"]), [rand(2, 3, 4, low=0.5, high=2.0),
                                                           rand(2, 3, 4, low=-2.0, high=2.0)], smoke=True)
    yield onnx_case(op, "square_const", node("Pow", ["x0", "c"]), [rand(2, 6)], consts={"c": 2.0})
    yield onnx_case(op, "sqrt_const", node("Pow", ["x0", "c"]), [rand(2, 6, low=0.0, high=4.0)],
                    consts={"c": 0.5}, opset=11)


def _variadic(op_type: str):
    op = f"onnx.{op_type}"
    yield onnx_case(op, "three", node(op_type, ["x0", "x1", "x2"]), [rand(2, 3, 4), rand(2, 3, 4), rand(2, 3, 4)],
                    smoke=True)
    yield onnx_case(op, "bcast", node(op_type, ["x0", "x1"]), [rand(2, 3, 4), rand(3, 1)])
    yield onnx_case(op, "one", node(op_type, ["x0"]), [rand(2, 5)], opset=11)
    yield onnx_case(op, "const", node(op_type, ["x0", "c"]), [rand(2, 5)], consts={"c": 0.25})


@family("onnx.Max")
def max_():
    yield from _variadic("Max")


@family("onnx.Min")
def min_():
    yield from _variadic("Min")


@family("onnx.Sum")
def sum_():
    yield from _variadic("Sum")


@family("onnx.Clip")
def clip():
    op = "onnx.Clip"
    yield onnx_case(op, "min_max", node("Clip", ["x0", "lo", "hi"]), [rand(1, 3, 4, 5, low=-3, high=3)],
                    consts={"lo": -1.0, "hi": 1.5}, smoke=True)
    yield onnx_case(op, "relu6", node("Clip", ["x0", "lo", "hi"]), [rand(2, 8, low=-3, high=9)],
                    consts={"lo": 0.0, "hi": 6.0}, opset=11)
    yield onnx_case(op, "min_only", node("Clip", ["x0", "lo"]), [rand(2, 8, low=-3, high=3)], consts={"lo": 0.0})
    yield onnx_case(op, "max_only", node("Clip", ["x0", "", "hi"]), [rand(2, 8, low=-3, high=3)],
                    consts={"hi": 0.5}, opset=13)
    yield onnx_case(op, "none", node("Clip", ["x0"]), [rand(2, 8)])
