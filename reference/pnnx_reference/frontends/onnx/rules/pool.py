"""Pooling: `F.max_poolNd`, `F.avg_poolNd`, `F.lp_poolNd`, global pools as `F.adaptive_*_poolNd(x, 1)`.
Padding PyTorch cannot express (uneven, or over half the window) becomes an `F.pad` first:
-inf for max pooling, zeros for average pooling that counts the padding."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..values import constant
from .operands import conv_pads, ints_attr, spatial_rank, torch_pad
from .registry import RULES

rule = RULES.register

_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
_LP = {1: F.lp_pool1d, 2: F.lp_pool2d, 3: F.lp_pool3d}
_ADAPTIVE_AVG = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}
_ADAPTIVE_MAX = {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}


def _window(ctx, x):
    n = spatial_rank(ctx, x)
    kernel = ints_attr(ctx, "kernel_shape", n, 1)
    strides = ints_attr(ctx, "strides", n, 1)
    dilations = ints_attr(ctx, "dilations", n, 1)
    pads = conv_pads(ctx, x, n, kernel, strides, dilations)
    return n, kernel, strides, dilations, pads


def _torch_can_pad(pads, kernel, dilations, n) -> bool:
    return pads[:n] == pads[n:] and all(p <= ((k - 1) * d + 1) // 2 for p, k, d in zip(pads[:n], kernel, dilations))


@rule("MaxPool", produces=("F.max_pool1d", "F.max_pool2d", "F.max_pool3d", "F.pad", "Tensor.reshape"))
def max_pool(ctx):
    x = ctx.tensor(0)
    n, kernel, strides, dilations, pads = _window(ctx, x)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    want_indices = len(ctx.node.outputs) > 1 and bool(ctx.node.outputs[1])
    if int(ctx.attr("storage_order", 0)) and want_indices:
        ctx.fail("MaxPool indices in column-major order (storage_order=1) are not supported")
    if not _torch_can_pad(pads, kernel, dilations, n):
        if want_indices:
            ctx.fail("MaxPool indices with padding PyTorch cannot express are not supported")
        x = F.pad(x, torch_pad(pads), value=float("-inf"))
        pads = [0] * (2 * n)
    args = dict(kernel_size=tuple(kernel), stride=tuple(strides), padding=tuple(pads[:n]),
                dilation=tuple(dilations), ceil_mode=ceil_mode)
    if not want_indices:
        return _MAX[n](x, **args)
    y, indices = _MAX[n](x, return_indices=True, **args)
    return [y, _flat_indices(x, indices)]


def _flat_indices(x, indices):
    """PyTorch's indices count within each (n, c) plane; ONNX's over the whole tensor."""
    planes = 1
    for d in x.shape[2:]:
        planes = planes * d
    offsets = constant(np.arange(int(x.shape[0]) * int(x.shape[1])).reshape([int(x.shape[0]), int(x.shape[1])]
                                                                            + [1] * (x.dim() - 2)), torch.int64)
    return indices + offsets * planes


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _window_sums(x, n, kernel, strides, dilations, pads):
    """Sum over each pooling window (zero padding), as a depthwise convolution with ones."""
    ones = constant(np.ones([int(x.shape[1]), 1] + list(kernel)), x.dtype)
    return _CONV[n](F.pad(x, torch_pad(pads)), ones, stride=tuple(strides), dilation=tuple(dilations),
                    groups=int(x.shape[1]))


def _spelled_out_average(ctx, x, n, kernel, strides, dilations, pads, count_pad: bool):
    """Average pooling PyTorch's pools cannot do (dilations, uneven padding left out of the count)."""
    if int(ctx.attr("ceil_mode", 0)):
        ctx.fail("AveragePool with dilations or uneven uncounted padding and ceil_mode has no PyTorch operator")
    sums = _window_sums(x, n, kernel, strides, dilations, pads)
    if count_pad:
        size = 1
        for k in kernel:
            size *= k
        return sums / size
    counts = _window_sums(constant(np.ones([1, 1] + [int(d) for d in x.shape[2:]]), x.dtype), n, kernel, strides,
                          dilations, pads)
    return sums / counts


@rule("AveragePool", produces=(
      "F.avg_pool1d", "F.avg_pool2d", "F.avg_pool3d", "F.conv1d", "F.conv2d", "F.conv3d", "F.pad"))
def average_pool(ctx):
    x = ctx.tensor(0)
    n, kernel, strides, dilations, pads = _window(ctx, x)
    ceil_mode = bool(ctx.attr("ceil_mode", 0))
    count_pad = bool(ctx.attr("count_include_pad", 0))
    if any(d != 1 for d in dilations) or (not _torch_can_pad(pads, kernel, dilations, n) and not count_pad
                                          and any(pads)):
        return _spelled_out_average(ctx, x, n, kernel, strides, dilations, pads, count_pad)
    if not _torch_can_pad(pads, kernel, dilations, n):
        x = F.pad(x, torch_pad(pads))
        pads = [0] * (2 * n)
    args = dict(kernel_size=tuple(kernel), stride=tuple(strides), padding=tuple(pads[:n]), ceil_mode=ceil_mode,
                count_include_pad=count_pad)
    return _AVG[n](x, **args)


@rule("LpPool", produces=(
      "F.conv1d", "F.conv2d", "F.conv3d", "F.lp_pool1d", "F.lp_pool2d", "F.lp_pool3d", "F.pad", "torch.abs",
      "torch.pow"))
def lp_pool(ctx):
    x = ctx.tensor(0)
    n, kernel, strides, dilations, pads = _window(ctx, x)
    p = float(ctx.attr("p", 2))
    if any(pads) or any(d != 1 for d in dilations):  # the p-th root of window sums of |x|^p
        if int(ctx.attr("ceil_mode", 0)):
            ctx.fail("LpPool with padding or dilations and ceil_mode has no PyTorch operator")
        return torch.pow(_window_sums(torch.pow(torch.abs(x), p), n, kernel, strides, dilations, pads), 1.0 / p)
    if p % 2:  # ONNX sums |x|^p, PyTorch x^p
        x = torch.abs(x)
    if n == 1:  # lp_pool1d takes ints
        return F.lp_pool1d(x, p, kernel[0], stride=strides[0], ceil_mode=bool(ctx.attr("ceil_mode", 0)))
    return _LP[n](x, p, tuple(kernel), stride=tuple(strides), ceil_mode=bool(ctx.attr("ceil_mode", 0)))


@rule("GlobalAveragePool", produces=("F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d"))
def global_average_pool(ctx):
    x = ctx.tensor(0)
    return _ADAPTIVE_AVG[spatial_rank(ctx, x)](x, 1)


@rule("GlobalMaxPool", produces=("F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d"))
def global_max_pool(ctx):
    x = ctx.tensor(0)
    return _ADAPTIVE_MAX[spatial_rank(ctx, x)](x, 1)


@rule("GlobalLpPool", produces=("torch.norm",))
def global_lp_pool(ctx):
    x = ctx.tensor(0)
    dims = list(range(2, x.dim()))
    return torch.norm(x, p=float(ctx.attr("p", 2)), dim=dims, keepdim=True)
