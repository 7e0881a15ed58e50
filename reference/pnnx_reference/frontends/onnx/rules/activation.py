"""Activations and softmax: `F.*` functions (they carry no weights), `nn.PReLU` for a
per-channel constant slope."""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .operands import axis
from .registry import RULES

rule = RULES.register


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7)


@rule("Relu", produces=("F.relu",))
def relu(ctx):
    return F.relu(ctx.tensor(0))


@rule("LeakyRelu", produces=("F.leaky_relu",))
def leaky_relu(ctx):
    return F.leaky_relu(ctx.tensor(0), float(ctx.attr("alpha", 0.01)))


@rule("Elu", produces=("F.elu",))
def elu(ctx):
    return F.elu(ctx.tensor(0), float(ctx.attr("alpha", 1.0)))


@rule("Celu", produces=("F.celu",))
def celu(ctx):
    return F.celu(ctx.tensor(0), float(ctx.attr("alpha", 1.0)))


_SELU_ALPHA, _SELU_GAMMA = 1.6732631921768188, 1.0507010221481323


@rule("Selu", produces=("F.elu", "F.selu"))
def selu(ctx):
    x = ctx.tensor(0)
    alpha, gamma = float(ctx.attr("alpha", _SELU_ALPHA)), float(ctx.attr("gamma", _SELU_GAMMA))
    if _close(alpha, _SELU_ALPHA) and _close(gamma, _SELU_GAMMA):
        return F.selu(x)
    return F.elu(x, alpha) * gamma


@rule("Sigmoid", produces=("Tensor.sigmoid",))
def sigmoid(ctx):
    return F.sigmoid(ctx.tensor(0))  # recorded by the tracer as Tensor.sigmoid


@rule("pnnx:LogSigmoid", produces=("F.logsigmoid",))
def log_sigmoid(ctx):
    """Log(Sigmoid(x)), fused (fusions.py)."""
    return F.logsigmoid(ctx.tensor(0))


@rule("Tanh", produces=("F.tanh",))
def tanh(ctx):
    return F.tanh(ctx.tensor(0))


@rule("HardSigmoid", produces=("F.hardsigmoid", "torch.clamp"))
def hard_sigmoid(ctx):
    x = ctx.tensor(0)
    alpha, beta = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5))
    if _close(alpha, 1 / 6) and _close(beta, 0.5):
        return F.hardsigmoid(x)
    return torch.clamp(x * alpha + beta, 0.0, 1.0)


@rule("HardSwish", produces=("F.hardswish",))
def hard_swish(ctx):
    return F.hardswish(ctx.tensor(0))


@rule("Gelu", produces=("F.gelu",))
def gelu(ctx):
    return F.gelu(ctx.tensor(0), approximate=ctx.attr("approximate", "none"))


@rule("Mish", produces=("F.mish",))
def mish(ctx):
    return F.mish(ctx.tensor(0))


@rule("Softplus", produces=("F.softplus",))
def softplus(ctx):
    return F.softplus(ctx.tensor(0))


@rule("Softsign", produces=("F.softsign",))
def softsign(ctx):
    return F.softsign(ctx.tensor(0))


@rule("ThresholdedRelu", produces=("F.threshold",))
def thresholded_relu(ctx):
    return F.threshold(ctx.tensor(0), float(ctx.attr("alpha", 1.0)), 0.0)


@rule("Shrink", produces=("F.hardshrink", "F.softshrink", "torch.where", "torch.zeros_like"))
def shrink(ctx):
    x = ctx.tensor(0)
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    if bias == 0.0:
        return F.hardshrink(x, lambd)
    if bias == lambd and x.is_floating_point():
        return F.softshrink(x, lambd)
    return torch.where(x < -lambd, x + bias, torch.where(x > lambd, x - bias, torch.zeros_like(x)))


@rule("PRelu", produces=("Tensor.reshape", "nn.PReLU", "torch.where"))
def prelu(ctx):
    x, slope = ctx.tensor(0), ctx.const(1)
    channels = x.shape[1] if x.dim() >= 2 else 1
    if slope is not None and x.dim() >= 2 and _per_channel(slope, x.dim(), int(channels), ctx.opset):
        count = slope.numel()

        def make():
            m = nn.PReLU(count)
            m.weight = nn.Parameter(slope.reshape(count).clone(), requires_grad=False)
            return m
        return ctx.module(make)(x)
    slope = ctx.tensor(1)
    return torch.where(x < 0, x * slope, x)


def _per_channel(slope: torch.Tensor, r: int, channels: int, opset: int) -> bool:
    """A slope PReLU applies along dim 1: one value, or C values on the channel axis (before
    opset 7 a 1-d slope of C values is always per channel)."""
    if slope.numel() == 1:
        return slope.dim() <= r
    dims = list(slope.shape)
    if opset < 7 and len(dims) == 1:
        return dims[0] == channels
    return slope.numel() == channels and dims[0] == channels and len(dims) == r - 1


# --- softmax family ----------------------------------------------------------------------
def _softmax_like(ctx, fn):
    """Opset 13 made softmax act on one axis; before, on the input flattened to 2-d at `axis`."""
    x = ctx.tensor(0)
    r = x.dim()
    a = axis(int(ctx.attr("axis", -1 if ctx.opset >= 13 else 1)), r)
    if ctx.opset >= 13 or a == r - 1:
        return fn(x, a)
    shape = list(x.shape)
    rows = 1
    for d in shape[:a]:
        rows = rows * d
    return fn(x.reshape(rows, -1), 1).reshape(shape)


@rule("Softmax", produces=("F.softmax", "Tensor.reshape"))
def softmax(ctx):
    return _softmax_like(ctx, lambda x, d: F.softmax(x, dim=d))


@rule("LogSoftmax", produces=("F.log_softmax", "Tensor.reshape"))
def log_softmax(ctx):
    return _softmax_like(ctx, lambda x, d: F.log_softmax(x, dim=d))


@rule("Hardmax", produces=("F.one_hot", "Tensor.reshape", "torch.argmax", "torch.movedim"))
def hardmax(ctx):
    def one_hot_max(x, d):
        hot = F.one_hot(torch.argmax(x, dim=d), int(x.shape[d])).to(x.dtype)
        return hot if d == x.dim() - 1 else torch.movedim(hot, -1, d)
    return _softmax_like(ctx, one_hot_max)


@rule("SwiGLU", produces=("F.silu", "Tensor.sigmoid"))
def swiglu(ctx):
    """Opset 28: a * sigmoid(alpha * a) * b."""
    a, b = ctx.tensor(0), ctx.tensor(1)
    alpha = float(ctx.attr("alpha", 1.0))
    gate = F.silu(a) if alpha == 1.0 else a * F.sigmoid(a * alpha)
    return gate * b
