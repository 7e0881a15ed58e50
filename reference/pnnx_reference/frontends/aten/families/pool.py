"""Pools whose aten form returns (values, indices) or drops what F.* takes."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..registry import rule
from ..written import short, stride, without_defaults


def _indices_read(used) -> bool:
    return used is None or (len(used) > 1 and used[1])


def _pair(values: tuple, used):
    """The (values, indices) pair a two-result node expects, None where nobody reads it."""
    return values if isinstance(values, tuple) else (values, None)


@rule("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", outputs=True)
def _adaptive_max_pool(name, kw, used):
    """F.adaptive_max_poolNd(return_indices=False) runs this aten op and drops the indices."""
    fn = getattr(F, name)
    size = kw["output_size"]  # F.adaptive_max_pool1d(x, 1); 2-d and 3-d sizes as aten has them
    return _pair(fn(kw["self"], short(size) if len(size) == 1 else size, return_indices=_indices_read(used)), used)


@rule("max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", outputs=True,
      produces=("F.max_pool1d", "F.max_pool2d", "F.max_pool3d"))
def _max_pool_with_indices(name, kw, used):
    """F.max_poolNd(return_indices=...), with the indices only when the graph reads them."""
    fn = getattr(F, name[:-len("_with_indices")])
    return _pair(fn(kw["self"], short(kw["kernel_size"]), stride(kw["stride"]), short(kw["padding"]),
                    short(kw["dilation"]), ceil_mode=kw["ceil_mode"], return_indices=_indices_read(used)), used)


@rule("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(name, kw):
    return getattr(F, name)(kw["self"], short(kw["kernel_size"]), stride(kw["stride"]), short(kw["padding"]),
                            short(kw["dilation"]), ceil_mode=kw["ceil_mode"])


@rule("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(name, kw):
    """A builtin F.* call: given what differs from the defaults, sizes in their short form."""
    given = without_defaults(getattr(torch.ops.aten, name).default, kw)
    given = {k: short(v) for k, v in given.items()}
    return getattr(F, name)(kw["self"], **given)


@rule("fractional_max_pool2d", "fractional_max_pool3d", outputs=True)
def _fractional_max_pool(name, kw, used):
    fn = getattr(F, name)
    return _pair(fn(kw["self"], short(kw["kernel_size"]), output_size=kw["output_size"],
                    return_indices=_indices_read(used), _random_samples=kw["random_samples"]), used)


@rule("max_unpool1d", "max_unpool2d", "max_unpool3d")
def _max_unpool(name, kw):
    """aten's max_unpool2d keeps only the output size (the indices are flat positions in it);
    F.max_unpool2d also wants a kernel and stride, which only check that size: any pair whose
    default size is near it will do. (aten has no max_unpool1d: F.max_unpool1d is traced as
    max_unpool2d between unsqueezes, which the TorchScript frontend joins back: fusions.py.)"""
    x, size = kw["self"], list(kw["output_size"])
    spatial = x.shape[2:] if x.dim() == len(size) + 2 else x.shape[1:]
    if kw.get("stride"):  # max_unpool3d keeps stride and padding: the smallest kernel from the stride on that fits
        stride, padding = list(kw["stride"]), list(kw.get("padding") or [0] * len(size))
        kernel = [_unpool_kernel(int(o), int(i), s, p) for o, i, s, p in zip(size, spatial, stride, padding)]
        written = None if kernel == stride else short(tuple(stride))
        return getattr(F, name)(x, kw["indices"], kernel_size=short(tuple(kernel)), stride=written,
                                padding=short(tuple(padding)), output_size=size)
    stride = [unpool_stride(int(o), int(i)) for o, i in zip(size, spatial)]
    return getattr(F, name)(x, kw["indices"], kernel_size=short(tuple(stride)), stride=None,
                            padding=0, output_size=size)


def _unpool_kernel(size: int, length: int, stride: int, padding: int) -> int:
    exact = max(1, size - (length - 1) * stride + 2 * padding)  # the default size is `size` itself
    return next((k for k in range(stride, exact) if abs(size - ((length - 1) * stride + k - 2 * padding)) < stride),
                exact)


def unpool_stride(size: int, length: int) -> int:
    """A kernel = stride for which an unpool of `length` may be `size` long (F.max_unpool
    accepts sizes strictly within one stride of length * stride): the nearest fit."""
    fits = [s for s in range(1, size + 2) if abs(size - length * s) < s]
    return min(fits, key=lambda s: (abs(size - length * s), s)) if fits else max(1, math.ceil(size / length))


@rule("_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
      produces=("F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d"))
def _adaptive_avg_pool(name, kw):
    return getattr(F, name[1:])(kw["self"], kw["output_size"])
