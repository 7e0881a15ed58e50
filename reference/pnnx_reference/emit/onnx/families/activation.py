"""Activations: one ONNX operator each where ONNX has it (nn.X, F.x and torch.x forms),
formulas elsewhere (silu, logsigmoid, tanhshrink, threshold, softmin); clamp/clip -> Clip."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import axis
from ..dtypes import from_torch_name, onnx_type
from ..promote import float_node
from ..registry import LOWERINGS


def _scalar(b, op, value, i=0):
    return b.const(value, b.dtype(op.inputs[i]), "scalar")


def _simple(onnx_op, *types, **attrs):
    @LOWERINGS.register(*types)
    def lower(b, op):
        b.node(onnx_op, [b.x(op)], b.y(op), **attrs)
    return lower


_simple("Relu", "nn.ReLU", "F.relu", "F.relu_", "torch.relu", "Tensor.relu")
_simple("Sigmoid", "nn.Sigmoid", "F.sigmoid", "torch.sigmoid", "Tensor.sigmoid")
_simple("Tanh", "nn.Tanh", "F.tanh", "torch.tanh", "Tensor.tanh")
_simple("Softsign", "nn.Softsign", "F.softsign")
_simple("HardSwish", "nn.Hardswish", "F.hardswish")
_simple("HardSigmoid", "nn.Hardsigmoid", "F.hardsigmoid", alpha=1.0 / 6, beta=0.5)
_simple("Mish", "nn.Mish", "F.mish")
_simple("Selu", "nn.SELU", "F.selu")


@LOWERINGS.register("nn.LeakyReLU", "F.leaky_relu", "F.leaky_relu_")
def leaky_relu(b, op):
    b.node("LeakyRelu", [b.x(op)], b.y(op), alpha=float(op.params.get("negative_slope", 0.01)))


@LOWERINGS.register("nn.RReLU", "F.rrelu", "F.rrelu_")
def rrelu(b, op):
    if op.params.get("training", False):
        raise Unsupported("training=True draws random slopes")
    lower, upper = float(op.params.get("lower", 1 / 8)), float(op.params.get("upper", 1 / 3))
    b.node("LeakyRelu", [b.x(op)], b.y(op), alpha=(lower + upper) / 2)


@LOWERINGS.register("nn.ELU", "F.elu", "F.elu_")
def elu(b, op):
    b.node("Elu", [b.x(op)], b.y(op), alpha=float(op.params.get("alpha", 1.0)))


@LOWERINGS.register("nn.CELU", "F.celu", "F.celu_")
def celu(b, op):
    float_node(b, op, "Celu", [b.x(op)], alpha=float(op.params.get("alpha", 1.0)))


@LOWERINGS.register("nn.GELU", "F.gelu")
def gelu(b, op):
    approximate = op.params.get("approximate", "none") or "none"
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"approximate={approximate!r}")
    b.node("Gelu", [b.x(op)], b.y(op), approximate=approximate)


@LOWERINGS.register("nn.SiLU", "F.silu")
def silu(b, op):
    # ONNX Swish (opset 24) has an onnxruntime 1.31 kernel for opset 24 only
    b.node("Mul", [b.x(op), b.node("Sigmoid", [b.x(op)])], b.y(op))


@LOWERINGS.register("nn.ReLU6", "F.relu6")
def relu6(b, op):
    b.node("Clip", [b.x(op), _scalar(b, op, 0), _scalar(b, op, 6)], b.y(op))


@LOWERINGS.register("nn.Hardtanh", "F.hardtanh", "F.hardtanh_")
def hardtanh(b, op):
    lo, hi = op.params.get("min_val", -1.0), op.params.get("max_val", 1.0)
    b.node("Clip", [b.x(op), _scalar(b, op, lo), _scalar(b, op, hi)], b.y(op))


@LOWERINGS.register("nn.Softplus", "F.softplus")
def softplus(b, op):
    # torch switches to the identity above `threshold`; Softplus reaches it there anyway
    beta = float(op.params.get("beta", 1.0))
    threshold = float(op.params.get("threshold", 20.0))
    linear = threshold < 20.0  # below 20 the switch to the identity is visible in float32
    scaled = b.x(op) if beta == 1.0 else b.node("Mul", [b.x(op), _scalar(b, op, beta)])
    out = b.node("Softplus", [scaled], 1 if beta != 1.0 or linear else b.y(op))
    if beta != 1.0:
        out = b.node("Div", [out, _scalar(b, op, beta)], 1 if linear else b.y(op))
    if linear:
        above = b.node("Greater", [scaled, _scalar(b, op, threshold)])
        b.node("Where", [above, b.x(op), out], b.y(op))


@LOWERINGS.register("nn.Softshrink", "F.softshrink")
def softshrink(b, op):
    lambd = float(op.params.get("lambd", 0.5))
    b.node("Shrink", [b.x(op)], b.y(op), lambd=lambd, bias=lambd)


@LOWERINGS.register("nn.Hardshrink", "F.hardshrink")
def hardshrink(b, op):
    b.node("Shrink", [b.x(op)], b.y(op), lambd=float(op.params.get("lambd", 0.5)), bias=0.0)


@LOWERINGS.register("nn.Tanhshrink", "F.tanhshrink")
def tanhshrink(b, op):
    b.node("Sub", [b.x(op), b.node("Tanh", [b.x(op)])], b.y(op))


@LOWERINGS.register("nn.LogSigmoid", "F.logsigmoid")
def logsigmoid(b, op):
    # log(sigmoid(x)) = -softplus(-x), stable for large |x|
    b.node("Neg", [b.node("Softplus", [b.node("Neg", [b.x(op)])])], b.y(op))


@LOWERINGS.register("nn.Threshold", "F.threshold", "F.threshold_")
def threshold(b, op):
    above = b.node("Greater", [b.x(op), _scalar(b, op, op.params["threshold"])])
    b.node("Where", [above, b.x(op), _scalar(b, op, op.params["value"])], b.y(op))


@LOWERINGS.register("nn.PReLU", "F.prelu")
def prelu(b, op):
    rank = b.rank(op.inputs[0])
    if op.type == "nn.PReLU":
        slope = b.attr(op, "weight")
        if slope.size > 1 and rank >= 3:  # per channel (dim 1): broadcast over the trailing dims
            slope = slope.reshape([slope.size] + [1] * (rank - 2))
        b.node("PRelu", [b.x(op), b.attr_weight(op, "weight", slope)], b.y(op))
        return
    weight = op.input("weight", 1)
    if weight is None:
        raise Unsupported("no weight operand")
    slope = weight.name
    n = b.shape(weight)[0] if b.rank(weight) == 1 else -1
    if n > 1 and rank >= 3:  # per channel (dim 1)
        slope = b.node("Reshape", [slope, b.const([n] + [1] * (rank - 2), hint="shape")])
    b.node("PRelu", [b.x(op), slope], b.y(op))


def _source(b, op) -> str:
    """The input, cast first when a `dtype=` argument asks for it (as torch does)."""
    name = op.params.get("dtype")
    if name is None:
        return b.x(op)
    return b.node("Cast", [b.x(op)], to=onnx_type(from_torch_name(name)))


def _dim(b, op, default=None):
    dim = op.params.get("dim", default)
    if dim is None:
        raise Unsupported("dim=None (implicit softmax dim) is not lowered")
    return axis(int(dim), b.rank(op.inputs[0]))


@LOWERINGS.register("nn.Softmax", "F.softmax", "torch.softmax", "Tensor.softmax")
def softmax(b, op):
    b.node("Softmax", [_source(b, op)], b.y(op), axis=_dim(b, op))


@LOWERINGS.register("nn.LogSoftmax", "F.log_softmax", "torch.log_softmax", "Tensor.log_softmax")
def log_softmax(b, op):
    b.node("LogSoftmax", [_source(b, op)], b.y(op), axis=_dim(b, op))


@LOWERINGS.register("nn.Softmin", "F.softmin")
def softmin(b, op):
    b.node("Softmax", [b.node("Neg", [_source(b, op)])], b.y(op), axis=_dim(b, op))


@LOWERINGS.register("nn.Softmax2d")
def softmax2d(b, op):
    b.node("Softmax", [b.x(op)], b.y(op), axis=b.rank(op.inputs[0]) - 3)


@LOWERINGS.register("nn.GLU", "F.glu")
def glu(b, op):
    dim = axis(int(op.params.get("dim", -1)), b.rank(op.inputs[0]))
    first, second = b.node("Split", [b.x(op)], 2, axis=dim, num_outputs=2)
    b.node("Mul", [first, b.node("Sigmoid", [second])], b.y(op))


@LOWERINGS.register("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip")
def clamp(b, op):
    dt = b.dtype(op.inputs[0])
    if len(op.inputs) > 1:  # a tensor min/max: Max then Min, broadcast as torch.clamp does
        _clamp_by_tensors(b, op, dt)
        return
    bounds = [op.params.get("min"), op.params.get("max")]
    inputs = [b.x(op)] + ["" if v is None else b.const(v, dt, "bound") for v in bounds]
    while inputs[-1] == "":
        inputs.pop()
    b.node("Clip", inputs, b.y(op))


def _clamp_by_tensors(b, op, dt):
    result = b.x(op)
    bounds = [(func, op.input(name), op.params.get(name)) for name, func in (("min", "Max"), ("max", "Min"))]
    bounds = [(f, o, v) for f, o, v in bounds if o is not None or v is not None]
    for i, (func, operand, value) in enumerate(bounds):
        if operand is None:
            bound = b.const(value, dt, "bound")
        else:
            bound = operand.name if b.dtype(operand) == dt else b.node("Cast", [operand.name], to=onnx_type(dt))
        result = b.node(func, [result, bound], b.y(op) if i == len(bounds) - 1 else 1)
