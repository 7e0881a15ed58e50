"""Activations: one ONNX operator each where ONNX has it (nn.X, F.x and torch.x forms),
formulas elsewhere (silu, logsigmoid, tanhshrink, threshold, softmin); clamp/clip -> Clip."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import axis
from ..dtypes import from_torch_name, onnx_type
from ..promote import float_node
from ..registry import LOWERINGS


def _scalar(ctx, op, value, i=0):
    return ctx.const(value, ctx.dtype(op.inputs[i]), "scalar")


def _simple(onnx_op, *types, **attrs):
    @LOWERINGS.register(*types)
    def lower(ctx, op):
        ctx.node(onnx_op, [ctx.x(op)], ctx.y(op), **attrs)
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
def leaky_relu(ctx, op):
    ctx.node("LeakyRelu", [ctx.x(op)], ctx.y(op), alpha=float(op.params.get("negative_slope", 0.01)))


@LOWERINGS.register("nn.RReLU", "F.rrelu", "F.rrelu_")
def rrelu(ctx, op):
    if op.params.get("training", False):
        raise Unsupported("training=True draws random slopes")
    lower, upper = float(op.params.get("lower", 1 / 8)), float(op.params.get("upper", 1 / 3))
    ctx.node("LeakyRelu", [ctx.x(op)], ctx.y(op), alpha=(lower + upper) / 2)


@LOWERINGS.register("nn.ELU", "F.elu", "F.elu_")
def elu(ctx, op):
    ctx.node("Elu", [ctx.x(op)], ctx.y(op), alpha=float(op.params.get("alpha", 1.0)))


@LOWERINGS.register("nn.CELU", "F.celu", "F.celu_")
def celu(ctx, op):
    float_node(ctx, op, "Celu", [ctx.x(op)], alpha=float(op.params.get("alpha", 1.0)))


@LOWERINGS.register("nn.GELU", "F.gelu")
def gelu(ctx, op):
    approximate = op.params.get("approximate", "none") or "none"
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"approximate={approximate!r}")
    ctx.node("Gelu", [ctx.x(op)], ctx.y(op), approximate=approximate)


@LOWERINGS.register("nn.SiLU", "F.silu")
def silu(ctx, op):
    # ONNX Swish (opset 24) has an onnxruntime 1.31 kernel for opset 24 only
    ctx.node("Mul", [ctx.x(op), ctx.node("Sigmoid", [ctx.x(op)])], ctx.y(op))


@LOWERINGS.register("nn.ReLU6", "F.relu6")
def relu6(ctx, op):
    ctx.node("Clip", [ctx.x(op), _scalar(ctx, op, 0), _scalar(ctx, op, 6)], ctx.y(op))


@LOWERINGS.register("nn.Hardtanh", "F.hardtanh", "F.hardtanh_")
def hardtanh(ctx, op):
    lo, hi = op.params.get("min_val", -1.0), op.params.get("max_val", 1.0)
    ctx.node("Clip", [ctx.x(op), _scalar(ctx, op, lo), _scalar(ctx, op, hi)], ctx.y(op))


@LOWERINGS.register("nn.Softplus", "F.softplus")
def softplus(ctx, op):
    # torch switches to the identity above `threshold`; Softplus reaches it there anyway
    beta = float(op.params.get("beta", 1.0))
    threshold = float(op.params.get("threshold", 20.0))
    linear = threshold < 20.0  # below 20 the switch to the identity is visible in float32
    scaled = ctx.x(op) if beta == 1.0 else ctx.node("Mul", [ctx.x(op), _scalar(ctx, op, beta)])
    out = ctx.node("Softplus", [scaled], 1 if beta != 1.0 or linear else ctx.y(op))
    if beta != 1.0:
        out = ctx.node("Div", [out, _scalar(ctx, op, beta)], 1 if linear else ctx.y(op))
    if linear:
        above = ctx.node("Greater", [scaled, _scalar(ctx, op, threshold)])
        ctx.node("Where", [above, ctx.x(op), out], ctx.y(op))


@LOWERINGS.register("nn.Softshrink", "F.softshrink")
def softshrink(ctx, op):
    lambd = float(op.params.get("lambd", 0.5))
    ctx.node("Shrink", [ctx.x(op)], ctx.y(op), lambd=lambd, bias=lambd)


@LOWERINGS.register("nn.Hardshrink", "F.hardshrink")
def hardshrink(ctx, op):
    ctx.node("Shrink", [ctx.x(op)], ctx.y(op), lambd=float(op.params.get("lambd", 0.5)), bias=0.0)


@LOWERINGS.register("nn.Tanhshrink", "F.tanhshrink")
def tanhshrink(ctx, op):
    ctx.node("Sub", [ctx.x(op), ctx.node("Tanh", [ctx.x(op)])], ctx.y(op))


@LOWERINGS.register("nn.LogSigmoid", "F.logsigmoid")
def logsigmoid(ctx, op):
    # log(sigmoid(x)) = -softplus(-x), stable for large |x|
    ctx.node("Neg", [ctx.node("Softplus", [ctx.node("Neg", [ctx.x(op)])])], ctx.y(op))


@LOWERINGS.register("nn.Threshold", "F.threshold", "F.threshold_")
def threshold(ctx, op):
    above = ctx.node("Greater", [ctx.x(op), _scalar(ctx, op, op.params["threshold"])])
    ctx.node("Where", [above, ctx.x(op), _scalar(ctx, op, op.params["value"])], ctx.y(op))


@LOWERINGS.register("nn.PReLU", "F.prelu")
def prelu(ctx, op):
    rank = ctx.rank(op.inputs[0])
    if op.type == "nn.PReLU":
        slope = ctx.attr(op, "weight")
        if slope.size > 1 and rank >= 3:  # per channel (dim 1): broadcast over the trailing dims
            slope = slope.reshape([slope.size] + [1] * (rank - 2))
        ctx.node("PRelu", [ctx.x(op), ctx.attr_weight(op, "weight", slope)], ctx.y(op))
        return
    weight = op.input("weight", 1)
    if weight is None:
        raise Unsupported("no weight operand")
    slope = weight.name
    n = ctx.shape(weight)[0] if ctx.rank(weight) == 1 else -1
    if n > 1 and rank >= 3:  # per channel (dim 1)
        slope = ctx.node("Reshape", [slope, ctx.const([n] + [1] * (rank - 2), hint="shape")])
    ctx.node("PRelu", [ctx.x(op), slope], ctx.y(op))


def _source(ctx, op) -> str:
    """The input, cast first when a `dtype=` argument asks for it (as torch does)."""
    name = op.params.get("dtype")
    if name is None:
        return ctx.x(op)
    return ctx.node("Cast", [ctx.x(op)], to=onnx_type(from_torch_name(name)))


def _dim(ctx, op, default=None):
    dim = op.params.get("dim", default)
    if dim is None:
        raise Unsupported("dim=None (implicit softmax dim) is not lowered")
    return axis(int(dim), ctx.rank(op.inputs[0]))


@LOWERINGS.register("nn.Softmax", "F.softmax", "torch.softmax", "Tensor.softmax")
def softmax(ctx, op):
    ctx.node("Softmax", [_source(ctx, op)], ctx.y(op), axis=_dim(ctx, op))


@LOWERINGS.register("nn.LogSoftmax", "F.log_softmax", "torch.log_softmax", "Tensor.log_softmax")
def log_softmax(ctx, op):
    ctx.node("LogSoftmax", [_source(ctx, op)], ctx.y(op), axis=_dim(ctx, op))


@LOWERINGS.register("nn.Softmin", "F.softmin")
def softmin(ctx, op):
    ctx.node("Softmax", [ctx.node("Neg", [_source(ctx, op)])], ctx.y(op), axis=_dim(ctx, op))


@LOWERINGS.register("nn.Softmax2d")
def softmax2d(ctx, op):
    ctx.node("Softmax", [ctx.x(op)], ctx.y(op), axis=ctx.rank(op.inputs[0]) - 3)


@LOWERINGS.register("nn.GLU", "F.glu")
def glu(ctx, op):
    dim = axis(int(op.params.get("dim", -1)), ctx.rank(op.inputs[0]))
    first, second = ctx.node("Split", [ctx.x(op)], 2, axis=dim, num_outputs=2)
    ctx.node("Mul", [first, ctx.node("Sigmoid", [second])], ctx.y(op))


@LOWERINGS.register("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip")
def clamp(ctx, op):
    dt = ctx.dtype(op.inputs[0])
    if len(op.inputs) > 1:  # a tensor min/max: Max then Min, broadcast as torch.clamp does
        _clamp_by_tensors(ctx, op, dt)
        return
    bounds = [op.params.get("min"), op.params.get("max")]
    inputs = [ctx.x(op)] + ["" if v is None else ctx.const(v, dt, "bound") for v in bounds]
    while inputs[-1] == "":
        inputs.pop()
    ctx.node("Clip", inputs, ctx.y(op))


def _clamp_by_tensors(ctx, op, dt):
    result = ctx.x(op)
    bounds = [(func, op.input(name), op.params.get(name)) for name, func in (("min", "Max"), ("max", "Min"))]
    bounds = [(f, o, v) for f, o, v in bounds if o is not None or v is not None]
    for i, (func, operand, value) in enumerate(bounds):
        if operand is None:
            bound = ctx.const(value, dt, "bound")
        else:
            bound = operand.name if ctx.dtype(operand) == dt else ctx.node("Cast", [operand.name], to=onnx_type(dt))
        result = ctx.node(func, [result, bound], ctx.y(op) if i == len(bounds) - 1 else 1)
