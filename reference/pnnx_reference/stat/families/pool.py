"""Pools: an average adds every element of its window, a max compares all but one."""
from __future__ import annotations

import math

from ..registry import Count, moved, numel, output, rule


def _kernel(op, spatial: int) -> int:
    size = op.params.get("kernel_size")
    size = [size] * spatial if isinstance(size, int) else list(size)
    return math.prod(size * spatial if len(size) == 1 else size)  # F.avg_pool2d(x, 2): kernel_size=(2)


def _spatial(op) -> int:
    return int(op.type[-2]) if op.type[-2].isdigit() else len(op.inputs[0].shape) - 2


@rule("nn.AvgPool1d", "nn.AvgPool2d", "nn.AvgPool3d", "F.avg_pool1d", "F.avg_pool2d", "F.avg_pool3d")
def _avg_pool(op) -> Count:
    return Count(output(op) * _kernel(op, _spatial(op)), moved(op))


@rule("nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d", "F.max_pool1d", "F.max_pool2d", "F.max_pool3d")
def _max_pool(op) -> Count:
    return Count(output(op) * (_kernel(op, _spatial(op)) - 1), moved(op))


def _windows(size: int, out: int) -> list[int]:
    """Adaptive pooling's window lengths along one dim."""
    return [math.ceil((i + 1) * size / out) - (i * size) // out for i in range(out)]


def _adaptive_window_sum(op, minus: int) -> int:
    x, y = op.inputs[0].shape, op.outputs[0].shape
    spatial = _spatial(op)
    per_plane = 1
    for size, out in zip(x[-spatial:], y[-spatial:]):
        per_plane *= sum(w for w in _windows(size, out))  # separable: sum over the grid of products
    planes = math.prod(y[:-spatial])
    return planes * (per_plane - minus * math.prod(y[-spatial:]))


@rule("nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveAvgPool3d",
      "F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d")
def _adaptive_avg_pool(op) -> Count:
    return Count(_adaptive_window_sum(op, 0), moved(op))


@rule("nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d",
      "F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d")
def _adaptive_max_pool(op) -> Count:
    return Count(_adaptive_window_sum(op, 1), moved(op))


@rule("nn.LPPool1d", "nn.LPPool2d")
def _lp_pool_module(op) -> Count:
    """Upstream counts no arithmetic for the module form."""
    return Count(0, moved(op))


@rule("F.lp_pool1d", "F.lp_pool2d")
def _lp_pool(op) -> Count:
    """x^p (4 per input), a window sum, a scale, the p-th root (8 per output); the powers
    and the pooled sum are written out between steps."""
    kernel, out = _kernel(op, _spatial(op)), output(op)
    return Count(4 * numel(op.inputs[0]) + out * (kernel + 1 + 8), numel(op.inputs[0]) + 4 * out)
