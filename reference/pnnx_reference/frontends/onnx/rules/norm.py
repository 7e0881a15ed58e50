"""Normalizations: `nn.BatchNormNd`, `nn.InstanceNormNd`, `nn.LayerNorm`, `nn.GroupNorm`,
`nn.RMSNorm` holding constant scales and statistics (`F.*` forms when they are computed), and
the stateless LRN / LpNormalization / MeanVarianceNormalization."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .operands import axes, axis
from .registry import RULES

rule = RULES.register


def _param(tensor: torch.Tensor) -> nn.Parameter:
    return nn.Parameter(tensor.detach().clone().reshape(-1), requires_grad=False)


def _consts(ctx, indices):
    """The constant tensors of the listed inputs, or None unless all are (absent ones: None)."""
    out = []
    for i in indices:
        if not ctx.has(i):
            out.append(None)
            continue
        const = ctx.const(i)
        if const is None:
            return None
        out.append(const)
    return out


def _no_extra_outputs(ctx, what: str) -> None:
    """The running statistics a training-mode node also gives: fine when nothing reads them
    (torch.onnx names them for a BatchNorm with track_running_stats=False)."""
    read = [n for n in ctx.node.outputs[1:] if n and ctx.owner.is_read(n)]
    if read:
        ctx.fail(f"{what}: the training-time outputs ({', '.join(read)}) are not supported")


_BATCHNORM = {2: nn.BatchNorm1d, 3: nn.BatchNorm1d, 4: nn.BatchNorm2d, 5: nn.BatchNorm3d}


@rule("BatchNormalization", produces=(
      "F.batch_norm", "Tensor.reshape", "nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d"))
def batch_norm(ctx):
    x = ctx.tensor(0)
    if int(ctx.attr("training_mode", 0)):
        return _batch_statistics(ctx, x)
    if not int(ctx.attr("spatial", 1)):  # before opset 9: statistics per element, not per channel
        ctx.fail("BatchNormalization with spatial=0 (per-element statistics) is not supported")
    _no_extra_outputs(ctx, "BatchNormalization")
    eps = float(ctx.attr("epsilon", 1e-5))
    consts = _consts(ctx, (1, 2, 3, 4))
    if consts is not None and x.dim() in _BATCHNORM and x.is_floating_point():
        scale, bias, mean, var = consts
        module_cls = _BATCHNORM[x.dim()]

        def make():
            m = module_cls(scale.numel(), eps=eps, dtype=scale.dtype)
            m.weight, m.bias = _param(scale), _param(bias)
            m.running_mean.copy_(mean.reshape(-1))
            m.running_var.copy_(var.reshape(-1))
            return m.eval()
        return ctx.module(make)(x)
    return F.batch_norm(x, ctx.tensor(3), ctx.tensor(4), ctx.tensor(1), ctx.tensor(2), False, 0.0, eps)


def _batch_statistics(ctx, x):
    """training_mode=1 normalizes by the batch's own statistics (torch.onnx writes a BatchNorm
    with track_running_stats=False so): that module, when only Y is read."""
    _no_extra_outputs(ctx, "BatchNormalization with training_mode=1")
    eps = float(ctx.attr("epsilon", 1e-5))
    consts = _consts(ctx, (1, 2))
    if consts is not None and x.dim() in _BATCHNORM and x.is_floating_point():
        scale, bias = consts
        module_cls = _BATCHNORM[x.dim()]

        def make():
            m = module_cls(scale.numel(), eps=eps, track_running_stats=False, dtype=scale.dtype)
            m.weight, m.bias = _param(scale), _param(bias)
            return m.eval()
        return ctx.module(make)(x)
    return F.batch_norm(x, None, None, ctx.tensor(1), ctx.tensor(2), True, 0.0, eps)


_INSTANCENORM = {3: nn.InstanceNorm1d, 4: nn.InstanceNorm2d, 5: nn.InstanceNorm3d}


@rule("InstanceNormalization", produces=(
      "F.instance_norm", "Tensor.reshape", "nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d"))
def instance_norm(ctx):
    x = ctx.tensor(0)
    eps = float(ctx.attr("epsilon", 1e-5))
    consts = _consts(ctx, (1, 2))
    if consts is not None and x.dim() in _INSTANCENORM:
        scale, bias = consts
        module_cls = _INSTANCENORM[x.dim()]

        def make():
            m = module_cls(scale.numel(), eps=eps, affine=True, dtype=scale.dtype)
            m.weight, m.bias = _param(scale), _param(bias)
            return m
        return ctx.module(make)(x)
    return F.instance_norm(x, weight=ctx.tensor(1), bias=ctx.tensor(2), eps=eps)


def _normalized_shape(ctx, x) -> list[int]:
    a = axis(int(ctx.attr("axis", -1)), x.dim())
    return [int(d) for d in x.shape[a:]]


def _as_shape(tensor: torch.Tensor, shape: list[int]) -> torch.Tensor:
    return tensor.expand(shape) if tuple(tensor.shape) != tuple(shape) else tensor


@rule("LayerNormalization", produces=(
      "F.layer_norm", "Tensor.expand", "nn.LayerNorm", "torch.mean", "torch.rsqrt"))
def layer_norm(ctx):
    x = ctx.tensor(0)
    eps = float(ctx.attr("epsilon", 1e-5))
    y = _layer_norm(ctx, x, eps)
    if not any(ctx.node.outputs[1:]):
        return y
    # the statistics outputs: over the normalized dims, kept as size-1 dims
    dims = list(range(x.dim() - len(_normalized_shape(ctx, x)), x.dim()))
    mean = torch.mean(x, dim=dims, keepdim=True)
    centered = x - mean
    inv_std = torch.rsqrt(torch.mean(centered * centered, dim=dims, keepdim=True) + eps)
    return [y, mean, inv_std]


def _layer_norm(ctx, x, eps: float):
    shape = _normalized_shape(ctx, x)
    consts = _consts(ctx, (1, 2))
    if consts is not None:
        scale, bias = consts

        def make():
            m = nn.LayerNorm(shape, eps=eps, bias=bias is not None, dtype=scale.dtype)
            m.weight = nn.Parameter(_as_shape(scale, shape).clone(), requires_grad=False)
            if bias is not None:
                m.bias = nn.Parameter(_as_shape(bias, shape).clone(), requires_grad=False)
            return m
        return ctx.module(make)(x)
    bias = ctx.tensor(2) if ctx.has(2) else None
    return F.layer_norm(x, shape, ctx.tensor(1), bias, eps)


@rule("RMSNormalization", produces=("F.rms_norm", "Tensor.expand", "nn.RMSNorm"))
def rms_norm(ctx):
    x = ctx.tensor(0)
    eps = float(ctx.attr("epsilon", 1e-5))
    shape = _normalized_shape(ctx, x)
    scale = ctx.const(1)
    if scale is not None:
        def make():
            m = nn.RMSNorm(shape, eps=eps, dtype=scale.dtype)
            m.weight = nn.Parameter(_as_shape(scale, shape).clone(), requires_grad=False)
            return m
        return ctx.module(make)(x)
    return F.rms_norm(x, shape, ctx.tensor(1), eps)


@rule("GroupNormalization", produces=(
      "F.group_norm", "Tensor.repeat_interleave", "Tensor.reshape", "nn.GroupNorm", "torch.repeat_interleave"))
def group_norm(ctx):
    x = ctx.tensor(0)
    groups, eps = int(ctx.attr("num_groups")), float(ctx.attr("epsilon", 1e-5))
    channels = int(x.shape[1])
    consts = _consts(ctx, (1, 2))
    if consts is None:
        scale, bias = ctx.tensor(1), ctx.tensor(2)
        if ctx.opset < 21 and int(scale.numel()) == groups and groups != channels:
            scale, bias = (torch.repeat_interleave(t, channels // groups) for t in (scale, bias))
        return F.group_norm(x, groups, scale, bias, eps)
    scale, bias = consts
    if ctx.opset < 21 and scale.numel() == groups and groups != channels:
        # opset 18 scales per group; PyTorch (and opset 21) per channel
        scale, bias = (t.reshape(-1).repeat_interleave(channels // groups) for t in (scale, bias))

    def make():
        m = nn.GroupNorm(groups, channels, eps=eps, dtype=scale.dtype)
        m.weight, m.bias = _param(scale), _param(bias)
        return m
    return ctx.module(make)(x)


@rule("LRN", produces=("F.local_response_norm",))
def lrn(ctx):
    return F.local_response_norm(ctx.tensor(0), int(ctx.attr("size")), alpha=float(ctx.attr("alpha", 1e-4)),
                                 beta=float(ctx.attr("beta", 0.75)), k=float(ctx.attr("bias", 1.0)))


@rule("LpNormalization", produces=("F.normalize",))
def lp_normalization(ctx):
    x = ctx.tensor(0)
    return F.normalize(x, p=float(ctx.attr("p", 2)), dim=axis(int(ctx.attr("axis", -1)), x.dim()))


@rule("MeanVarianceNormalization", produces=("torch.mean", "torch.sqrt"))
def mean_variance_normalization(ctx):
    x = ctx.tensor(0)
    dims = axes(ctx.attr("axes", [0, 2, 3]), x.dim())
    mean = torch.mean(x, dim=dims, keepdim=True)
    centered = x - mean
    variance = torch.mean(centered * centered, dim=dims, keepdim=True)
    return centered / (torch.sqrt(variance) + 1e-9)
