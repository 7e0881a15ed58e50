"""Slicing, gathering and scattering: Slice -> `x[a:b:s]` (`torch.flip` for negative steps),
Gather -> `Tensor.select` / `torch.index_select` / `nn.Embedding` (a constant table read by
run-time indices), GatherElements -> `torch.gather`, GatherND / ScatterND -> `Tensor.index` /
`Tensor.index_put`, ScatterElements -> `torch.scatter*`, TopK, CumSum, OneHot; NonZero ->
`torch.nonzero` (transposed: ONNX gives one row per dimension), a size that the values decide."""
from __future__ import annotations

import operator

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..values import ShapeValue, constant, from_tensor
from .operands import axes as normalized, axis, sizes
from .registry import RULES

rule = RULES.register
_INT64_MAX = 2 ** 63 - 1


def _slice_params(ctx, r: int):
    if ctx.opset >= 10:
        starts, ends = ctx.ints(1, "starts"), ctx.ints(2, "ends")
        dims = ctx.ints(3, "axes") if ctx.has(3) else list(range(len(starts)))
        steps = ctx.ints(4, "steps") if ctx.has(4) else [1] * len(starts)
    else:
        starts, ends = list(ctx.attr("starts")), list(ctx.attr("ends"))
        dims = list(ctx.attr("axes", list(range(len(starts)))))
        steps = [1] * len(starts)
    return starts, ends, normalized(dims, r), steps


def _bound(v):
    """A start/end in Python slice terms: None for "to the end" (INT64_MAX and beyond)."""
    if isinstance(v, int) and not hasattr(v, "node") and v >= _INT64_MAX // 2:
        return None
    if isinstance(v, int) and not hasattr(v, "node") and v <= -(_INT64_MAX // 2):
        return 0
    return v


def _reverse_range(start, end, size):
    """ONNX's start/end for a negative step -> (start, end) of the same elements, flipped."""
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = max(0, min(size - 1, start))
    end = max(-1, min(size - 1, end))
    return size - 1 - start, size - 1 - end


@rule("Slice", produces=("Tensor.slice", "torch.flip"))
def slice_(ctx):
    value = ctx.x(0)
    r = value.dim()
    starts, ends, dims, steps = _slice_params(ctx, r)
    if isinstance(value, ShapeValue):
        index = [slice(None)] * r
        for s, e, d, st in zip(starts, ends, dims, steps):
            index[d] = slice(int(s), int(e), int(st))  # Python's slice clamps as ONNX does
        return ShapeValue(value.array[tuple(index)], value.dtype)
    x = ctx.tensor(0)
    flips = [d for d, st in zip(dims, steps) if int(st) < 0]
    if flips:
        x = torch.flip(x, flips)
    index = [slice(None)] * r
    for s, e, d, st in zip(starts, ends, dims, steps):
        if int(st) < 0:
            size = int(x.shape[d])
            s, e = _reverse_range(int(s), int(e), size)
            st = -int(st)
        start, end = _bound(s), _bound(e)
        index[d] = slice(None if start == 0 else start, end, None if int(st) == 1 else int(st))
    while index and index[-1] == slice(None):
        index.pop()
    return x[tuple(index)] if index else x


@rule("Gather", produces=("Tensor.reshape", "Tensor.select", "nn.Embedding", "torch.index_select"))
def gather(ctx):
    value = ctx.x(0)
    a = axis(int(ctx.attr("axis", 0)), value.dim())
    known = ctx.known(1)
    if isinstance(value, ShapeValue) or (ctx.const(0) is not None and isinstance(known, ShapeValue)):
        if known is None:
            ctx.fail("Gather from sizes by run-time indices")
        data = value if isinstance(value, ShapeValue) else from_tensor(value)
        index = np.array(known.tolist(), dtype=np.int64)
        return ShapeValue(np.take(data.array, index, axis=a), data.dtype)
    x = ctx.tensor(0)
    table = ctx.const(0)
    if known is None:
        indices = ctx.tensor(1)
        if table is not None and a == 0 and table.dim() == 2 and table.is_floating_point():
            return _embedding(ctx, table)(indices)
        flat = torch.index_select(x, a, indices.reshape(-1))
        return flat.reshape(sizes(x)[:a] + sizes(indices) + sizes(x)[a + 1:])
    size = int(x.shape[a])
    items = known.tolist()
    if not isinstance(items, list):  # a scalar index drops the axis
        return x.select(a, int(items) % size if int(items) < 0 else items)
    index = constant(np.mod(np.array(items, dtype=np.int64), size), torch.int64)
    flat = torch.index_select(x, a, index.reshape(-1))
    if index.dim() == 1:
        return flat
    return flat.reshape(sizes(x)[:a] + list(index.shape) + sizes(x)[a + 1:])


def _embedding(ctx, table: torch.Tensor):
    def make():
        m = nn.Embedding(table.shape[0], table.shape[1], dtype=table.dtype)
        m.weight = nn.Parameter(table.detach().clone(), requires_grad=False)
        return m
    return ctx.module(make)


@rule("GatherElements", produces=("Tensor.any", "torch.gather", "torch.remainder", "torch.where"))
def gather_elements(ctx):
    x = ctx.tensor(0)
    return torch.gather(x, axis(int(ctx.attr("axis", 0)), x.dim()), _nonnegative(ctx, 1, x, int(ctx.attr("axis", 0))))


def _nonnegative(ctx, i: int, x, a: int):
    """Index input i with negative entries counted from the end, as ONNX allows."""
    size = int(x.shape[axis(a, x.dim())])
    const = ctx.const(i)
    if const is not None:
        return torch.remainder(const, size) if (const < 0).any() else const
    index = ctx.tensor(i)
    return torch.where(index < 0, index + size, index)


def _nd_index(indices: torch.Tensor) -> tuple:
    # the last dim is how many leading dims are indexed: the graph's structure, a constant even
    # where the other sizes depend on the values (NonZero's), so it is read without the guard
    return tuple(indices[..., j] for j in range(operator.index(indices.shape[-1])))


@rule("NonZero", produces=("Tensor.t", "torch.nonzero"))
def non_zero(ctx):
    return torch.nonzero(ctx.tensor(0)).t()


@rule("GatherND", produces=("Tensor.index",))
def gather_nd(ctx):
    if int(ctx.attr("batch_dims", 0)):
        ctx.fail("GatherND with batch_dims is not supported")
    x, indices = ctx.tensor(0), ctx.tensor(1)
    return x[_nd_index(indices)]


@rule("ScatterND", produces=("Tensor.index_put", "Tensor.reshape", "torch.sum"))
def scatter_nd(ctx):
    reduction = ctx.attr("reduction", "none")
    x, indices, updates = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    if reduction in ("none", "add"):
        return x.index_put(_nd_index(indices), updates, accumulate=reduction == "add")
    # mul / max / min: each index addresses a slice of x; reduce into x's flat elements
    k = int(indices.shape[-1])
    dims = [int(d) for d in x.shape]
    strides = [1] * len(dims)
    for d in range(len(dims) - 2, -1, -1):
        strides[d] = strides[d + 1] * dims[d + 1]
    inner = 1
    for d in dims[k:]:
        inner *= d
    weights = constant(strides[:k], torch.int64)
    base = torch.sum(indices.to(torch.int64) * weights, dim=-1, keepdim=True)
    flat = (base + constant(np.arange(inner), torch.int64)).reshape(-1)
    out = torch.scatter_reduce(x.reshape(-1), 0, flat, updates.reshape(-1), _SCATTER_REDUCE[reduction])
    return out.reshape(dims)


_SCATTER_REDUCE = {"mul": "prod", "max": "amax", "min": "amin"}


@rule("ScatterElements", "Scatter", produces=(
      "Tensor.any", "torch.remainder", "torch.scatter_add", "torch.where"))
def scatter_elements(ctx):
    x = ctx.tensor(0)
    a = axis(int(ctx.attr("axis", 0)), x.dim())
    indices, updates = _nonnegative(ctx, 1, x, a), ctx.tensor(2)
    reduction = ctx.attr("reduction", "none")
    if reduction == "none":
        return torch.scatter(x, a, indices, updates)
    if reduction == "add":
        return torch.scatter_add(x, a, indices, updates)
    return torch.scatter_reduce(x, a, indices, updates, _SCATTER_REDUCE[reduction])


@rule("TopK", produces=("torch.sort",))
def top_k(ctx):
    x = ctx.tensor(0)
    k = int(ctx.scalar(1, "K")) if ctx.opset >= 10 else int(ctx.attr("k"))
    a = axis(int(ctx.attr("axis", -1)), x.dim())
    # ONNX orders equal values by index; a stable sort does, torch.topk promises nothing
    values, indices = torch.sort(x, dim=a, descending=bool(ctx.attr("largest", 1)), stable=True)
    index = tuple([slice(None)] * a + [slice(None, k)])
    return [values[index], indices[index]]


def _cumulative(ctx, fn, identity: float):
    """CumSum / CumProd: `exclusive` shifts by one along the axis (the identity first),
    `reverse` accumulates from the end."""
    x = ctx.tensor(0)
    if x.dtype == torch.bool:  # torch.onnx writes one for bools.cumsum(), which torch computes in int64
        ctx.fail(f"{ctx.node.op_type} of a bool tensor (ONNX defines it on numbers only)")
    a = axis(int(ctx.scalar(1, "axis")), x.dim())
    reverse, exclusive = int(ctx.attr("reverse", 0)), int(ctx.attr("exclusive", 0))
    if reverse:
        x = torch.flip(x, [a])
    if exclusive:
        x = F.pad(x, [0, 0] * (x.dim() - 1 - a) + [1, 0], value=identity).narrow(a, 0, int(x.shape[a]))
    y = fn(x, a)
    return torch.flip(y, [a]) if reverse else y


@rule("CumSum", produces=("F.pad", "Tensor.narrow", "torch.cumsum", "torch.flip"))
def cum_sum(ctx):
    return _cumulative(ctx, torch.cumsum, 0)


@rule("CumProd", produces=("F.pad", "Tensor.narrow", "torch.cumprod", "torch.flip"))
def cum_prod(ctx):
    return _cumulative(ctx, torch.cumprod, 1)


@rule("OneHot", produces=(
      "F.one_hot", "Tensor.unsqueeze", "torch.logical_and", "torch.movedim", "torch.remainder", "torch.where"))
def one_hot(ctx):
    indices = ctx.tensor(0)
    depth = int(ctx.scalar(1, "depth"))
    off_on = ctx.tensor(2)
    a = int(ctx.attr("axis", -1))
    indices = indices.to(torch.int64)
    hot = F.one_hot(torch.remainder(indices, depth), depth)
    inside = torch.logical_and(indices >= -depth, indices < depth).unsqueeze(-1)  # outside: all off
    off, on = off_on[0], off_on[1]
    y = torch.where(torch.logical_and(hot == 1, inside), on, off)
    r = y.dim()
    a = axis(a, r)
    return y if a == r - 1 else torch.movedim(y, -1, a)

