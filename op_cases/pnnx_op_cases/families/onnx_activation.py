"""ONNX table, the `activation` family (frontends/onnx/rules/activation.py): Celu, Elu, Gelu,
HardSigmoid, HardSwish, LeakyRelu, LogSoftmax, Mish, PRelu, Relu, Selu, Shrink, Sigmoid, Softmax,
Softplus, Tanh."""
from __future__ import annotations

from ..builders import Param, rand
from ..onnx_builders import node, onnx_case
from ..registry import family


def _activation(op_type: str, variants=(), opset: int = 13, low: float = -3.0, high: float = 3.0):
    """The default attributes on a 4-d input (smoke), then each (name, attrs, opset) variant."""
    op = f"onnx.{op_type}"
    yield onnx_case(op, "default", node(op_type, ["x0"]), [rand(1, 3, 4, 5, low=low, high=high)], opset=opset,
                    smoke=True)
    yield onnx_case(op, "r2", node(op_type, ["x0"]), [rand(4, 7, low=low, high=high)], opset=opset)
    for name, attrs, version in variants:
        yield onnx_case(op, name, node(op_type, ["x0"], **attrs), [rand(2, 6, 5, low=low, high=high)], opset=version)


@family("onnx.Relu")
def relu():
    yield from _activation("Relu", [("opset11", {}, 11)])


@family("onnx.LeakyRelu")
def leaky_relu():
    yield from _activation("LeakyRelu", [("alpha0.2", {"alpha": 0.2}, 16)])


@family("onnx.Elu")
def elu():
    yield from _activation("Elu", [("alpha0.5", {"alpha": 0.5}, 11)])


@family("onnx.Celu")
def celu():
    yield from _activation("Celu", [("alpha2", {"alpha": 2.0}, 12)], opset=12)


@family("onnx.Selu")
def selu():
    yield from _activation("Selu", [("custom", {"alpha": 1.5, "gamma": 2.0}, 11)])


@family("onnx.Sigmoid")
def sigmoid():
    yield from _activation("Sigmoid", [("opset11", {}, 11)])


@family("onnx.Tanh")
def tanh():
    yield from _activation("Tanh", [("opset11", {}, 11)])


@family("onnx.HardSigmoid")
def hard_sigmoid():
    yield from _activation("HardSigmoid", [("torch_form", {"alpha": 1 / 6, "beta": 0.5}, 11),
                                           ("custom", {"alpha": 0.3, "beta": 0.4}, 13)])


@family("onnx.HardSwish")
def hard_swish():
    yield from _activation("HardSwish", opset=14)


@family("onnx.Gelu")
def gelu():
    yield from _activation("Gelu", [("tanh", {"approximate": "tanh"}, 20)], opset=20)


@family("onnx.Mish")
def mish():
    yield from _activation("Mish", opset=18)


@family("onnx.Softplus")
def softplus():
    yield from _activation("Softplus", [("opset11", {}, 11)])


@family("onnx.Shrink")
def shrink():
    yield from _activation("Shrink", [("hard", {"lambd": 1.0}, 11), ("soft", {"lambd": 0.5, "bias": 0.5}, 13),
                                      ("other", {"lambd": 1.0, "bias": 0.25}, 13)])


@family("onnx.PRelu")
def prelu():
    op = "onnx.PRelu"
    yield onnx_case(op, "channel", node("PRelu", ["x0", "slope"]), [rand(1, 4, 5, 6)],
                    params={"slope": Param((4, 1, 1), 0.0, 0.5)}, smoke=True)
    yield onnx_case(op, "scalar", node("PRelu", ["x0", "slope"]), [rand(2, 3, 5)],
                    params={"slope": Param((1,), 0.0, 0.5)}, opset=11)
    yield onnx_case(op, "last_dim", node("PRelu", ["x0", "slope"]), [rand(2, 3, 5)],
                    params={"slope": Param((5,), 0.0, 0.5)}, opset=16)
    yield onnx_case(op, "input_slope", node("PRelu", ["x0", "x1"]), [rand(2, 3, 5), rand(3, 1, low=0.0, high=0.5)])


def _softmax(op_type: str):
    op = f"onnx.{op_type}"
    yield onnx_case(op, "last", node(op_type, ["x0"]), [rand(2, 3, 10, low=-4, high=4)], smoke=True)
    yield onnx_case(op, "axis1", node(op_type, ["x0"], axis=1), [rand(2, 5, 4, low=-4, high=4)])
    # before opset 13 the input is flattened to 2-d at the axis: softmax over dims 1..
    yield onnx_case(op, "opset11_axis1", node(op_type, ["x0"], axis=1), [rand(2, 3, 4, low=-4, high=4)], opset=11)
    yield onnx_case(op, "opset11_default", node(op_type, ["x0"]), [rand(3, 7, low=-4, high=4)], opset=11)


@family("onnx.Softmax")
def softmax():
    yield from _softmax("Softmax")


@family("onnx.LogSoftmax")
def log_softmax():
    yield from _softmax("LogSoftmax")
