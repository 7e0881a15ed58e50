"""Activations and Softmax: one ncnn layer each where ncnn has one (a few add a UnaryOp log;
log_softmax is the max-shifted formula);
softsign and tanhshrink as formulas, softmin as Softmax of -x, RReLU in eval mode as a
leaky ReLU, Threshold as a mask."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from .... import expression as ex
from ..arithmetic import UNARY, binary, lower_expression, lower_tree, scalar, unary
from ..context import FLT_MAX, Context, param
from ..layers import Weight
from ..reduction import REDUCE_MAX, REDUCE_SUM, reduction
from ..registry import ANY, FIRST, LEADING, LOWERINGS, MOVES_DATA


def _single(ctx: Context, op, layer_type: str, prefix: str, params=None) -> None:
    if len(op.inputs) > 1:
        raise Unsupported(f"{op.type} with tensor arguments ({', '.join((op.inputnames or [])[1:])}) "
                          f"is not lowered to {layer_type}")
    ctx.emit(layer_type, prefix, [ctx.blob(op.inputs[0])], [op.outputs[0].name], params or {})


def _plain(layer_type: str, prefix: str, params_of=lambda op: {}):
    return lambda ctx, op: _single(ctx, op, layer_type, prefix, params_of(op))


def _clip_bounds(op, low_key: str, high_key: str, low=None, high=None):
    lo = param(op, low_key, low)
    hi = param(op, high_key, high)
    # ncnn.param has no infinity: an infinite bound is the float range's end (as no bound is)
    return {0: max(float(-FLT_MAX if lo is None else lo), -FLT_MAX),
            1: min(float(FLT_MAX if hi is None else hi), FLT_MAX)}


PLAIN = {
    ("nn.ReLU", "F.relu", "F.relu_", "torch.relu", "Tensor.relu"): ("ReLU", "relu", lambda op: {}),
    ("nn.LeakyReLU", "F.leaky_relu", "F.leaky_relu_"): ("ReLU", "leakyrelu",
                                       lambda op: {0: float(param(op, "negative_slope", 0.01))}),
    ("nn.ReLU6", "F.relu6"): ("Clip", "relu6", lambda op: {0: 0.0, 1: 6.0}),
    ("nn.Hardtanh", "F.hardtanh", "F.hardtanh_"): ("Clip", "hardtanh",
                                    lambda op: _clip_bounds(op, "min_val", "max_val", -1.0, 1.0)),
    ("nn.Sigmoid", "F.sigmoid", "torch.sigmoid", "Tensor.sigmoid"): ("Sigmoid", "sigmoid", lambda op: {}),
    ("nn.Tanh", "F.tanh", "torch.tanh", "Tensor.tanh"): ("TanH", "tanh", lambda op: {}),
    ("nn.SiLU", "F.silu"): ("Swish", "silu", lambda op: {}),
    ("nn.Mish", "F.mish"): ("Mish", "mish", lambda op: {}),
    ("nn.GELU", "F.gelu"): ("GELU", "gelu", lambda op: {0: 1} if param(op, "approximate") == "tanh" else {}),
    ("nn.ELU", "F.elu", "F.elu_"): ("ELU", "elu", lambda op: {0: float(param(op, "alpha", 1.0))}),
    ("nn.CELU", "F.celu"): ("CELU", "celu", lambda op: {0: float(param(op, "alpha", 1.0))}),
    ("nn.SELU", "F.selu"): ("SELU", "selu", lambda op: {0: 1.67326324, 1: 1.05070098}),
    ("nn.Hardswish", "F.hardswish"): ("HardSwish", "hardswish", lambda op: {0: 1.0 / 6, 1: 0.5}),
    ("nn.Hardsigmoid", "F.hardsigmoid"): ("HardSigmoid", "hardsigmoid", lambda op: {0: 1.0 / 6, 1: 0.5}),
    ("nn.Hardshrink", "F.hardshrink"): ("Shrink", "hardshrink",
                                        lambda op: {0: 0.0, 1: float(param(op, "lambd", 0.5))}),
    ("nn.Softshrink", "F.softshrink"): ("Shrink", "softshrink",
                                        lambda op: {0: float(param(op, "lambd", 0.5)),
                                                    1: float(param(op, "lambd", 0.5))}),
}


@LOWERINGS.register("nn.Softplus", "F.softplus", batch=ANY)
def softplus(ctx: Context, op) -> None:
    """ncnn Softplus is log(1 + exp(x)), PyTorch's with beta=1, threshold=20. Another beta or
    threshold: t = beta * x; x where t > threshold (m = ncnn Threshold, 1 there), else
    Softplus(t) / beta, as x * m + s * (1 - m); t is clamped to the threshold before Softplus
    so that the branch not taken stays finite (exp overflows past 88) and each term is exact."""
    beta, limit = float(param(op, "beta", 1.0)), float(param(op, "threshold", 20.0))
    if beta == 1.0 and limit == 20.0:
        _single(ctx, op, "Softplus", "softplus")
        return
    if len(op.inputs) > 1:
        raise Unsupported(f"{op.type} with tensor arguments is not lowered")
    x, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    t = scalar(ctx, "mul", x, beta, ctx.temp(out)) if beta != 1.0 else x
    mask = ctx.temp(out)
    ctx.emit("Threshold", "threshold", [t], [mask], {0: limit})
    soft = ctx.temp(out)
    ctx.emit("Softplus", "softplus", [scalar(ctx, "min", t, limit, ctx.temp(out))], [soft], {})
    if beta != 1.0:
        soft = scalar(ctx, "div", soft, beta, ctx.temp(out))
    kept = binary(ctx, "mul", x, mask, ctx.temp(out))
    other = scalar(ctx, "add", scalar(ctx, "mul", mask, -1.0, ctx.temp(out)), 1.0, ctx.temp(out))
    binary(ctx, "add", kept, binary(ctx, "mul", soft, other, ctx.temp(out)), out)


@LOWERINGS.register("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip", batch=ANY, **MOVES_DATA)
def clamp(ctx: Context, op) -> None:
    """Clip; a tensor min/max (broadcast as torch does): min(max(x, min), max), BinaryOp max/min."""
    if len(op.inputs) == 1:
        _single(ctx, op, "Clip", "clamp", _clip_bounds(op, "min", "max"))
        return
    tree = ex.input_ref(0)
    for name, func in (("min", "max"), ("max", "min")):
        operand, value = op.input(name), param(op, name)
        if operand is not None:
            tree = ex.Call(func, (tree, ex.input_ref(op.inputs.index(operand))))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            tree = ex.Call(func, (tree, ex.literal(value)))
    lower_tree(ctx, op, tree, op.inputs, op.outputs[0].name)


# max/min against constants: exact on the integer or bool values a blob carries
SELECTS = {"ReLU": "relu", "Clip": "clamp"}

for _types, (_layer, _prefix, _params) in PLAIN.items():
    _exact = MOVES_DATA if SELECTS.get(_layer) == _prefix else {}
    LOWERINGS.register(*_types, batch=ANY, **_exact)(_plain(_layer, _prefix, _params))


@LOWERINGS.register("nn.PReLU", "F.prelu", batch=FIRST, unbatched_rank=1)
def prelu(ctx: Context, op) -> None:
    if "weight" in op.attrs:
        slope = op.attrs["weight"].to_numpy()
    else:
        slope = ctx.constant(op.inputs[1]) if len(op.inputs) > 1 else None
        if slope is None:
            raise Unsupported("the PReLU weight is not a constant")
    slope = slope.astype(np.float32).reshape(-1)
    if slope.size > 1 and not ctx.has_batch(op.inputs[0]):
        raise Unsupported("per-channel PReLU needs the channel on dim 1 after a batch axis: ncnn "
                          "blobs have no batch axis")
    _single_weights(ctx, op, "PReLU", "prelu", {0: int(slope.size)}, [Weight(slope, tagged=False)])


def _single_weights(ctx, op, layer_type, prefix, params, weights) -> None:
    ctx.emit(layer_type, prefix, [ctx.blob(op.inputs[0])], [op.outputs[0].name], params, weights)


def _softmax_axis(ctx: Context, op) -> int:
    dim = param(op, "dim")
    if dim is None:
        raise Unsupported("softmax without dim")
    return ctx.axis(op.inputs[0], int(dim))


@LOWERINGS.register("nn.Softmax", "F.softmax", "torch.softmax", "Tensor.softmax", batch=LEADING)
def softmax(ctx: Context, op) -> None:
    _single(ctx, op, "Softmax", "softmax", {0: _softmax_axis(ctx, op), 1: 1})


@LOWERINGS.register("nn.Softmax2d", batch=LEADING)
def softmax2d(ctx: Context, op) -> None:
    _single(ctx, op, "Softmax", "softmax", {0: ctx.axis(op.inputs[0], -3), 1: 1})


@LOWERINGS.register("nn.LogSoftmax", "F.log_softmax", "torch.log_softmax", "Tensor.log_softmax",
                    batch=LEADING)
def log_softmax(ctx: Context, op) -> None:
    """(x - max) - log(sum(exp(x - max))) along dim. Not log(Softmax(x)): a probability below
    the storage's smallest value (e^-17 in fp16, e^-104 in fp32) becomes 0 and its log -inf,
    where the shifted form stays finite (the sum is at least 1)."""
    if len(op.inputs) > 1:
        raise Unsupported(f"{op.type} with tensor arguments is not lowered")
    src, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    axes, rank = [_softmax_axis(ctx, op)], ctx.rank(op.inputs[0])
    shifted = binary(ctx, "sub", src, reduction(ctx, REDUCE_MAX, src, axes, rank, True, ctx.temp(out)), ctx.temp(out))
    total = reduction(ctx, REDUCE_SUM, unary(ctx, "exp", shifted, ctx.temp(out)), axes, rank, True, ctx.temp(out))
    binary(ctx, "sub", shifted, unary(ctx, "log", total, ctx.temp(out)), out)


@LOWERINGS.register("nn.LogSigmoid", "F.logsigmoid", batch=ANY)
def log_sigmoid(ctx: Context, op) -> None:
    mid = ctx.temp(op.outputs[0].name)
    ctx.emit("Sigmoid", "sigmoid", [ctx.blob(op.inputs[0])], [mid])
    ctx.emit("UnaryOp", "log", [mid], [op.outputs[0].name], {0: UNARY["log"]})


@LOWERINGS.register("nn.GLU", "F.glu", batch=LEADING)
def glu(ctx: Context, op) -> None:
    _single(ctx, op, "GLU", "glu", {0: ctx.axis(op.inputs[0], int(param(op, "dim", -1)))})


@LOWERINGS.register("F.softsign", "nn.Softsign", batch=ANY)
def softsign(ctx: Context, op) -> None:
    lower_expression(ctx, op, "div(@0,add(abs(@0),1))", ("input",), op.outputs[0].name)


@LOWERINGS.register("F.tanhshrink", "nn.Tanhshrink", batch=ANY)
def tanhshrink(ctx: Context, op) -> None:
    lower_expression(ctx, op, "sub(@0,tanh(@0))", ("input",), op.outputs[0].name)


@LOWERINGS.register("F.softmin", "nn.Softmin", batch=LEADING)
def softmin(ctx: Context, op) -> None:
    """softmax(-x)."""
    dim = param(op, "dim")
    if dim is None:
        raise Unsupported("softmin without dim")
    src, out = op.inputs[0], op.outputs[0].name
    negated = unary(ctx, "neg", ctx.blob(src), ctx.temp(out))
    ctx.emit("Softmax", "softmin", [negated], [out], {0: ctx.axis(src, int(dim)), 1: 1})


@LOWERINGS.register("F.rrelu", "F.rrelu_", "nn.RReLU", batch=ANY)
def rrelu(ctx: Context, op) -> None:
    """In eval mode RReLU is a leaky ReLU with the mean slope (lower + upper) / 2."""
    if param(op, "training", False):
        raise Unsupported("RReLU with training=True draws random slopes: only training=False is lowered")
    slope = (float(param(op, "lower", 1.0 / 8)) + float(param(op, "upper", 1.0 / 3))) / 2
    ctx.emit("ReLU", "rrelu", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: slope})


@LOWERINGS.register("F.threshold", "F.threshold_", "nn.Threshold", batch=ANY)
def threshold(ctx: Context, op) -> None:
    """x if x > threshold else value: x * m + value * (1 - m), m = ncnn Threshold (1 where x >
    threshold, else 0); each term is exactly x, value or 0."""
    limit, value = param(op, "threshold"), param(op, "value")
    if limit is None or value is None:
        raise Unsupported("threshold without threshold/value")
    x, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    mask = ctx.temp(out)
    ctx.emit("Threshold", "threshold", [x], [mask], {0: float(limit)})
    if float(value) == 0.0:
        binary(ctx, "mul", x, mask, out)
        return
    kept = binary(ctx, "mul", x, mask, ctx.temp(out))
    filler = scalar(ctx, "add", scalar(ctx, "mul", mask, -float(value), ctx.temp(out)), value, ctx.temp(out))
    binary(ctx, "add", kept, filler, out)
