"""Reductions -> `torch.sum` / `torch.mean` / `torch.amax` / `torch.amin` / `torch.prod` /
`torch.norm` / `torch.logsumexp`; ArgMax / ArgMin -> `torch.argmax` / `torch.argmin`.
The axes are an attribute before opset 18 (13 for ReduceSum) and an input after."""
from __future__ import annotations

import numpy as np
import torch

from ..values import ShapeValue
from .operands import axes as normalized, axis
from .registry import RULES

rule = RULES.register

_AXES_INPUT_SINCE = {"ReduceSum": 13}


def _dims(ctx, x) -> list[int] | None:
    """The reduced dims, [] for "none" (noop_with_empty_axes), None for all."""
    since = _AXES_INPUT_SINCE.get(ctx.node.op_type, 18)
    if ctx.opset >= since:
        values = ctx.ints(1, "axes") if ctx.has(1) else []
    else:
        values = ctx.attr("axes") or []
    if not values:
        return [] if int(ctx.attr("noop_with_empty_axes", 0)) else None
    return sorted(normalized(values, x.dim()))


_SHAPE_REDUCTIONS = {"ReduceSum": np.sum, "ReduceProd": np.prod, "ReduceMax": np.max, "ReduceMin": np.min}


def _reduce_sizes(ctx, value: ShapeValue):
    """Sizes reduced as sizes (`numel` as the product of a Shape), so they stay traced."""
    if ctx.node.op_type not in _SHAPE_REDUCTIONS:
        ctx.fail(f"{ctx.node.op_type} of sizes")
    dims = _dims(ctx, value)
    keep = bool(int(ctx.attr("keepdims", 1)))
    if dims == []:
        return value
    dims = tuple(range(value.dim())) if dims is None else tuple(dims)
    array = _SHAPE_REDUCTIONS[ctx.node.op_type](value.array, axis=dims, keepdims=keep)
    return ShapeValue(np.array(array, dtype=object), value.dtype)


def _reduce(ctx, fn):
    value = ctx.x(0)
    if isinstance(value, ShapeValue):
        return _reduce_sizes(ctx, value)
    x = ctx.tensor(0)
    dims = _dims(ctx, x)
    keep = bool(int(ctx.attr("keepdims", 1)))
    if dims == []:  # noop_with_empty_axes: the elementwise part of the reduction only
        return _ELEMENTWISE.get(ctx.node.op_type, lambda v: v)(x)
    if dims is None:
        dims = list(range(x.dim()))
    if not dims:  # a 0-d input
        return x
    if ctx.node.op_type in _EMPTY_SET and any(int(x.shape[d]) == 0 for d in dims):
        return _empty_set(ctx, x, dims, keep)
    return fn(x, dims, keep)


# the result over an empty set: the spec's lowest (max) or highest (min) value of the type; a mean
# is undefined there, and onnxruntime gives 0, which torch.onnx's export of EmbeddingBag(mode="mean")
# relies on for an empty bag (torch.mean would give NaN)
_EMPTY_SET = {"ReduceMax": False, "ReduceMin": True, "ReduceMean": None}


def _empty_set(ctx, x, dims, keep):
    """A reduction over an empty dim that torch refuses or answers otherwise; the shape is
    known, so the result is a constant of the reduced shape."""
    dims = {d % x.dim() for d in dims}
    shape = [1 if d in dims else int(s) for d, s in enumerate(x.shape) if keep or d not in dims]
    highest = _EMPTY_SET[ctx.node.op_type]
    if highest is None:
        return torch.zeros(shape, dtype=_float(x).dtype)
    if x.dtype == torch.bool:
        value = highest
    elif x.is_floating_point():
        value = float("inf") if highest else float("-inf")
    else:
        info = torch.iinfo(x.dtype)
        value = info.max if highest else info.min
    return torch.full(shape, value, dtype=x.dtype)


def _float(x):
    return x if x.is_floating_point() else x.to(torch.float64)


_ELEMENTWISE = {"ReduceL1": torch.abs, "ReduceL2": torch.abs, "ReduceLogSum": torch.log,
                "ReduceSumSquare": lambda x: x * x}
_FUNCS = {
    "ReduceSum": lambda x, d, k: torch.sum(x, dim=d, keepdim=k),
    "ReduceMean": lambda x, d, k: torch.mean(_float(x), dim=d, keepdim=k),
    "ReduceMax": lambda x, d, k: torch.amax(x, dim=d, keepdim=k),
    "ReduceMin": lambda x, d, k: torch.amin(x, dim=d, keepdim=k),
    "ReduceL1": lambda x, d, k: torch.sum(torch.abs(x), dim=d, keepdim=k),
    "ReduceL2": lambda x, d, k: torch.norm(_float(x), p=2, dim=d, keepdim=k),
    "ReduceLogSum": lambda x, d, k: torch.log(torch.sum(x, dim=d, keepdim=k)),
    "ReduceLogSumExp": lambda x, d, k: torch.logsumexp(x, dim=d, keepdim=k),
    "ReduceSumSquare": lambda x, d, k: torch.sum(x * x, dim=d, keepdim=k),
}


def _reduce_rule(ctx):
    return _reduce(ctx, _FUNCS[ctx.node.op_type])


# what each lambda of _FUNCS calls
_PRODUCES = {"ReduceSum": ("torch.sum",), "ReduceMean": ("torch.mean",), "ReduceMax": ("torch.amax",),
             "ReduceMin": ("torch.amin",), "ReduceL1": ("torch.sum", "torch.abs"), "ReduceL2": ("torch.norm",),
             "ReduceLogSum": ("torch.log", "torch.sum"), "ReduceLogSumExp": ("torch.logsumexp",),
             "ReduceSumSquare": ("torch.sum",)}
for _name in _FUNCS:
    RULES.add(_name, _reduce_rule, produces=_PRODUCES[_name])


@rule("ReduceProd", produces=(
      "Tensor.max", "Tensor.min", "torch.abs", "torch.full", "torch.log", "torch.prod", "torch.zeros"))
def reduce_prod(ctx):
    def prod(x, dims, keep):
        for d in sorted(dims, reverse=True):  # torch.prod takes one dim at a time
            x = torch.prod(x, dim=d, keepdim=keep)
        return x
    return _reduce(ctx, prod)


def _arg(ctx, fn):
    x = ctx.tensor(0)
    a = axis(int(ctx.attr("axis", 0)), x.dim())
    keep = bool(int(ctx.attr("keepdims", 1)))
    if int(ctx.attr("select_last_index", 0)):
        last = int(x.shape[a]) - 1
        return last - fn(torch.flip(x, [a]), dim=a, keepdim=keep)
    return fn(x, dim=a, keepdim=keep)


@rule("ArgMax", produces=("torch.argmax", "torch.flip"))
def arg_max(ctx):
    return _arg(ctx, torch.argmax)


@rule("ArgMin", produces=("torch.argmin", "torch.flip"))
def arg_min(ctx):
    return _arg(ctx, torch.argmin)
