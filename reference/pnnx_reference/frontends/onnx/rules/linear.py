"""Gemm, MatMul (and MatMul + Add, fused in `../fusions.py`) -> `nn.Linear` where the weight is a
constant; `torch.matmul` otherwise. Einsum -> `torch.einsum`."""
from __future__ import annotations

import torch
import torch.nn as nn

from .registry import RULES

rule = RULES.register


def linear_module(ctx, weight: torch.Tensor, bias: torch.Tensor | None):
    """`nn.Linear(in, out)` with `weight` laid out [out, in]."""
    def make():
        m = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, dtype=weight.dtype)
        m.weight = nn.Parameter(weight.detach().clone().contiguous(), requires_grad=False)
        if bias is not None:
            m.bias = nn.Parameter(bias.detach().clone().reshape(-1).contiguous(), requires_grad=False)
        return m
    return ctx.module(make)


@rule("Gemm", produces=("Tensor.expand", "Tensor.reshape", "Tensor.t", "nn.Linear", "torch.matmul"))
def gemm(ctx):
    a = ctx.tensor(0)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    trans_a, trans_b = int(ctx.attr("transA", 0)), int(ctx.attr("transB", 0))
    b_const, c_const = ctx.const(1), ctx.const(2)
    if b_const is not None and not trans_a and a.dim() == 2 and b_const.is_floating_point():
        weight = b_const if trans_b else b_const.t()
        if alpha != 1.0:
            weight = weight * alpha
        n = weight.shape[0]
        if not ctx.has(2):
            return linear_module(ctx, weight, None)(a)
        if c_const is not None and (c_const.numel() == 1 or tuple(c_const.shape) in ((n,), (1, n))):
            bias = c_const.reshape(-1).expand(n) * beta if beta != 1.0 or c_const.numel() == 1 else c_const
            return linear_module(ctx, weight, bias)(a)
        return linear_module(ctx, weight, None)(a) + _scaled(ctx.tensor(2), beta)
    b = ctx.tensor(1)
    y = torch.matmul(a.t() if trans_a else a, b.t() if trans_b else b)
    if alpha != 1.0:
        y = y * alpha
    if ctx.has(2):
        y = y + _scaled(ctx.tensor(2), beta)
    return y


def _scaled(c, beta: float):
    return c * beta if beta != 1.0 else c


@rule("MatMul", produces=("Tensor.reshape", "Tensor.t", "nn.Linear", "torch.matmul"))
def matmul(ctx):
    a, weight = ctx.tensor(0), ctx.const(1)
    if weight is not None and weight.dim() == 2 and a.dim() >= 2 and weight.is_floating_point():
        return linear_module(ctx, weight.t(), None)(a)
    return torch.matmul(a, ctx.tensor(1))


@rule("pnnx:Linear", produces=("Tensor.reshape", "Tensor.t", "nn.Linear", "torch.matmul"))
def matmul_add(ctx):
    """MatMul(x, W) + b with constant W [in, out] and b [out] (see fusions.py)."""
    x = ctx.tensor(0)
    if x.dim() < 2:
        return torch.matmul(x, ctx.tensor(1)) + ctx.tensor(2)
    return linear_module(ctx, ctx.const(1).t(), ctx.const(2))(x)


@rule("Einsum", produces=("torch.einsum",))
def einsum(ctx):
    operands = [ctx.tensor(i) for i in range(len(ctx.inputs))]
    return torch.einsum(ctx.attr("equation").replace(" ", ""), *operands)


@rule("Det")
def det(ctx):
    return torch.linalg.det(ctx.tensor(0))
