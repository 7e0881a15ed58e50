"""Values made from attributes and sizes: Constant, ConstantOfShape (`torch.full`), Range
(`torch.arange`), EyeLike (`torch.eye`); random draws: RandomNormal(Like) (`torch.randn(_like)`),
RandomUniform(Like) (`torch.rand(_like)`), scaled and shifted. A `seed` names the generator's
state in the exporting runtime, which torch's generator cannot reproduce: draws differ run to
run as in torch, and no harness compares them value by value."""
from __future__ import annotations

import numpy as np
import torch

from ..values import ShapeValue, torch_dtype
from .registry import RULES

rule = RULES.register


@rule("Constant")
def constant(ctx):
    attrs = ctx.node.attrs
    if "value" in attrs:
        return attrs["value"]
    if "value_float" in attrs:
        return torch.tensor(float(attrs["value_float"]), dtype=torch.float32)
    if "value_floats" in attrs:
        return torch.tensor([float(v) for v in attrs["value_floats"]], dtype=torch.float32)
    if "value_int" in attrs:
        return torch.tensor(int(attrs["value_int"]), dtype=torch.int64)
    if "value_ints" in attrs:
        return torch.tensor([int(v) for v in attrs["value_ints"]], dtype=torch.int64)
    ctx.fail(f"a Constant holding {', '.join(attrs) or 'nothing'} has no PyTorch tensor")


@rule("ConstantOfShape", produces=("Tensor.reshape", "torch.full"))
def constant_of_shape(ctx):
    dims = ctx.ints(0, "shape")
    fill = ctx.attr("value")
    value, dtype = (fill.reshape(-1)[0].item(), fill.dtype) if fill is not None else (0.0, torch.float32)
    if _sizes(ctx.x(0), dims, dtype):  # torch.onnx's F.pad reverses its pads through zeros made so
        return ShapeValue(np.full(dims, value, dtype=object), dtype)
    return torch.full(dims, value, dtype=dtype)


def _sizes(shape, dims: list, dtype: torch.dtype) -> bool:
    """A few integers of a fixed count made from sizes: they take part in shape arithmetic
    (a tensor here would leave a Pad's or Reshape's sizes unknown at conversion time)."""
    return isinstance(shape, ShapeValue) and all(type(d) is int for d in dims) and int(np.prod(dims)) <= 64 \
        and not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool


@rule("Range", produces=("torch.arange",))
def range_(ctx):
    start, limit, delta = (ctx.scalar(i, name) for i, name in enumerate(("start", "limit", "delta")))
    return torch.arange(start, limit, delta, dtype=ctx.x(0).dtype)


@rule("EyeLike", produces=("Tensor.tril", "Tensor.triu", "torch.eye", "torch.ones"))
def eye_like(ctx):
    x = ctx.tensor(0)
    dtype = torch_dtype(ctx.attr("dtype"), "EyeLike") if ctx.attr("dtype") is not None else x.dtype
    n, m = int(x.shape[0]), int(x.shape[1])
    k = int(ctx.attr("k", 0))
    if k == 0:
        return torch.eye(n, m, dtype=dtype)
    return torch.ones(n, m, dtype=dtype).triu(k).tril(k)


def _dtype(ctx, default):
    code = ctx.attr("dtype")
    return torch_dtype(code, ctx.node.op_type) if code is not None else default


def _normal(ctx, draw):
    mean, scale = float(ctx.attr("mean", 0.0)), float(ctx.attr("scale", 1.0))
    return draw if (mean, scale) == (0.0, 1.0) else draw * scale + mean


def _uniform(ctx, draw):
    low, high = float(ctx.attr("low", 0.0)), float(ctx.attr("high", 1.0))
    return draw if (low, high) == (0.0, 1.0) else draw * (high - low) + low


@rule("RandomNormalLike", produces=("torch.randn_like",))
def random_normal_like(ctx):
    x = ctx.tensor(0)
    return _normal(ctx, torch.randn_like(x, dtype=_dtype(ctx, x.dtype)))


@rule("RandomUniformLike")
def random_uniform_like(ctx):
    x = ctx.tensor(0)
    return _uniform(ctx, torch.rand_like(x, dtype=_dtype(ctx, x.dtype)))


@rule("RandomNormal", produces=("torch.randn",))
def random_normal(ctx):
    return _normal(ctx, torch.randn([int(d) for d in ctx.attr("shape")], dtype=_dtype(ctx, torch.float32)))


@rule("RandomUniform")
def random_uniform(ctx):
    return _uniform(ctx, torch.rand([int(d) for d in ctx.attr("shape")], dtype=_dtype(ctx, torch.float32)))
