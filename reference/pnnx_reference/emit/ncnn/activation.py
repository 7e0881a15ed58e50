"""Elementwise activations and Softmax: one ncnn layer each (a few add a UnaryOp log)."""
from __future__ import annotations

import numpy as np

from .context import FLT_MAX, CannotLower, Context, param
from .layers import Weight
from .registry import lowers

UNARY_LOG = 8


def _single(ctx: Context, op, layer_type: str, prefix: str, params=None) -> None:
    if len(op.inputs) > 1:
        raise CannotLower(f"{op.type} with tensor arguments ({', '.join((op.inputnames or [])[1:])}) "
                          f"is not lowered to {layer_type}")
    ctx.emit(layer_type, prefix, [ctx.blob(op.inputs[0])], [op.outputs[0].name], params or {})


def _plain(layer_type: str, prefix: str, params_of=lambda op: {}):
    return lambda ctx, op: _single(ctx, op, layer_type, prefix, params_of(op))


def _clip_bounds(op, low_key: str, high_key: str, low=None, high=None):
    lo = param(op, low_key, low)
    hi = param(op, high_key, high)
    return {0: float(-FLT_MAX if lo is None else lo), 1: float(FLT_MAX if hi is None else hi)}


PLAIN = {
    ("nn.ReLU", "F.relu", "F.relu_", "torch.relu", "Tensor.relu"): ("ReLU", "relu", lambda op: {}),
    ("nn.LeakyReLU", "F.leaky_relu", "F.leaky_relu_"): ("ReLU", "leakyrelu",
                                       lambda op: {0: float(param(op, "negative_slope", 0.01))}),
    ("nn.ReLU6", "F.relu6"): ("Clip", "relu6", lambda op: {0: 0.0, 1: 6.0}),
    ("nn.Hardtanh", "F.hardtanh", "F.hardtanh_"): ("Clip", "hardtanh",
                                    lambda op: _clip_bounds(op, "min_val", "max_val", -1.0, 1.0)),
    ("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip"): ("Clip", "clamp",
                                                                   lambda op: _clip_bounds(op, "min", "max")),
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
    ("nn.Softplus", "F.softplus"): ("Softplus", "softplus", lambda op: _softplus(op)),
    ("nn.Hardshrink", "F.hardshrink"): ("Shrink", "hardshrink",
                                        lambda op: {0: 0.0, 1: float(param(op, "lambd", 0.5))}),
    ("nn.Softshrink", "F.softshrink"): ("Shrink", "softshrink",
                                        lambda op: {0: float(param(op, "lambd", 0.5)),
                                                    1: float(param(op, "lambd", 0.5))}),
}


def _softplus(op) -> dict:
    if float(param(op, "beta", 1.0)) != 1.0 or float(param(op, "threshold", 20.0)) != 20.0:
        raise CannotLower("ncnn Softplus has no beta/threshold: only beta=1, threshold=20")
    return {}


for _types, (_layer, _prefix, _params) in PLAIN.items():
    lowers(*_types)(_plain(_layer, _prefix, _params))


@lowers("nn.PReLU", "F.prelu")
def prelu(ctx: Context, op) -> None:
    if "weight" in op.attrs:
        slope = op.attrs["weight"].to_numpy()
    else:
        slope = ctx.constant(op.inputs[1]) if len(op.inputs) > 1 else None
        if slope is None:
            raise CannotLower("the PReLU weight is not a constant")
    slope = slope.astype(np.float32).reshape(-1)
    if slope.size > 1 and not ctx.has_batch(op.inputs[0]):
        raise CannotLower("per-channel PReLU needs the channel on dim 1 after a batch axis: ncnn "
                          "blobs have no batch axis")
    _single_weights(ctx, op, "PReLU", "prelu", {0: int(slope.size)}, [Weight(slope, tagged=False)])


def _single_weights(ctx, op, layer_type, prefix, params, weights) -> None:
    ctx.emit(layer_type, prefix, [ctx.blob(op.inputs[0])], [op.outputs[0].name], params, weights)


def _softmax_axis(ctx: Context, op) -> int:
    dim = param(op, "dim")
    if dim is None:
        raise CannotLower("softmax without dim")
    return ctx.axis(op.inputs[0], int(dim))


@lowers("nn.Softmax", "F.softmax", "torch.softmax", "Tensor.softmax")
def softmax(ctx: Context, op) -> None:
    _single(ctx, op, "Softmax", "softmax", {0: _softmax_axis(ctx, op), 1: 1})


@lowers("nn.Softmax2d")
def softmax2d(ctx: Context, op) -> None:
    _single(ctx, op, "Softmax", "softmax", {0: ctx.axis(op.inputs[0], -3), 1: 1})


@lowers("nn.LogSoftmax", "F.log_softmax", "torch.log_softmax", "Tensor.log_softmax")
def log_softmax(ctx: Context, op) -> None:
    mid = ctx.temp(op.outputs[0].name)
    ctx.emit("Softmax", "softmax", [ctx.blob(op.inputs[0])], [mid], {0: _softmax_axis(ctx, op), 1: 1})
    ctx.emit("UnaryOp", "log", [mid], [op.outputs[0].name], {0: UNARY_LOG})


@lowers("nn.LogSigmoid", "F.logsigmoid")
def log_sigmoid(ctx: Context, op) -> None:
    mid = ctx.temp(op.outputs[0].name)
    ctx.emit("Sigmoid", "sigmoid", [ctx.blob(op.inputs[0])], [mid])
    ctx.emit("UnaryOp", "log", [mid], [op.outputs[0].name], {0: UNARY_LOG})


@lowers("nn.GLU", "F.glu")
def glu(ctx: Context, op) -> None:
    _single(ctx, op, "GLU", "glu", {0: ctx.axis(op.inputs[0], int(param(op, "dim", -1)))})


@lowers("nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout",
        "nn.FeatureAlphaDropout", "F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d",
        "F.alpha_dropout", "F.feature_alpha_dropout", "nn.Identity", "Tensor.contiguous",
        "Tensor.detach", "torch.clone", "Tensor.clone", "torch.detach")
def identity(ctx: Context, op) -> None:
    """Inference no-ops: consumers read the input blob directly."""
    ctx.alias(op.outputs[0], op.inputs[0])
