"""Comparisons, boolean logic, bitwise ops, Where, and Cast."""
from __future__ import annotations

import operator

import torch

from ..values import ShapeValue, elementwise
from .operands import known_values, legacy_broadcast, scalar_operand
from .registry import RULES

rule = RULES.register

_COMPARE = {"Equal": (torch.eq, operator.eq), "Less": (torch.lt, operator.lt),
            "LessOrEqual": (torch.le, operator.le), "Greater": (torch.gt, operator.gt),
            "GreaterOrEqual": (torch.ge, operator.ge)}


def _compare(ctx):
    tensor_fn, value_fn = _COMPARE[ctx.node.op_type]
    if known_values(ctx, (0, 1)):
        out = elementwise(value_fn, ctx.known(0), ctx.known(1))
        out.dtype = torch.bool
        return out
    a = ctx.tensor(0)
    b = scalar_operand(ctx, 1, a) if ctx.const(1) is not None else ctx.tensor(1)
    return tensor_fn(a, legacy_broadcast(ctx, a, b))


for _name in _COMPARE:
    RULES.add(_name, _compare, produces=(f"torch.{_COMPARE[_name][0].__name__}",))

_LOGICAL = {"And": torch.logical_and, "Or": torch.logical_or, "Xor": torch.logical_xor,
            "BitwiseAnd": torch.bitwise_and, "BitwiseOr": torch.bitwise_or, "BitwiseXor": torch.bitwise_xor}


def _logical(ctx):
    return _LOGICAL[ctx.node.op_type](ctx.tensor(0), ctx.tensor(1))


for _name in _LOGICAL:
    RULES.add(_name, _logical, produces=(f"torch.{_LOGICAL[_name].__name__}",))


@rule("Not", produces=("torch.logical_not",))
def not_(ctx):
    return torch.logical_not(ctx.tensor(0))


@rule("BitwiseNot", produces=("torch.bitwise_not",))
def bitwise_not(ctx):
    return torch.bitwise_not(ctx.tensor(0))


@rule("Where", produces=("torch.where",))
def where(ctx):
    if known_values(ctx, (0, 1, 2)):
        cond, a, b = ctx.known(0), ctx.known(1), ctx.known(2)
        out = elementwise(lambda c, x, y: x if c else y, cond, a, b)
        out.dtype = a.dtype
        return out
    cond = ctx.tensor(0)
    a, b = ctx.tensor(1), ctx.tensor(2)
    # the ranks alone decide a scalar branch: a torch.broadcast_tensors here would be recorded
    if ctx.const(1) is not None and ctx.const(2) is None:
        a = scalar_operand(ctx, 1, b, rank=max(cond.dim(), b.dim()))
    elif ctx.const(2) is not None and ctx.const(1) is None:
        b = scalar_operand(ctx, 2, a, rank=max(cond.dim(), a.dim()))
    return torch.where(cond, a, b)


@rule("Cast", produces=("Tensor.to",))
def cast(ctx):
    from ..values import torch_dtype

    dtype = torch_dtype(ctx.attr("to"), "Cast")
    value = ctx.x(0)
    if isinstance(value, ShapeValue):
        return _cast_sizes(value, dtype)
    x = ctx.tensor(0)
    return x if x.dtype == dtype else x.to(dtype)


@rule("CastLike", produces=("Tensor.to",), dtype_only=(1,))
def cast_like(ctx):
    dtype = ctx.tensor(1).dtype
    value = ctx.x(0)
    if isinstance(value, ShapeValue):
        return _cast_sizes(value, dtype)
    x = ctx.tensor(0)
    return x if x.dtype == dtype else x.to(dtype)


def _cast_sizes(value: ShapeValue, dtype: torch.dtype) -> ShapeValue:
    """Sizes stay sizes through a Cast; a float that goes back to an integer truncates."""
    if dtype.is_floating_point:
        out = elementwise(lambda v: v, value)
    elif dtype == torch.bool:
        out = elementwise(bool, value)
    else:
        out = elementwise(lambda v: v if isinstance(v, int) else int(v), value)
    out.dtype = dtype
    return out


@rule("BitCast", produces=("Tensor.view",))
def bit_cast(ctx):
    """Opset 26: the same bytes read as another type of the same width."""
    from ..values import torch_dtype

    x = ctx.tensor(0)
    dtype = torch_dtype(ctx.attr("to"), "BitCast")
    if dtype.itemsize != x.dtype.itemsize:
        ctx.fail(f"BitCast between widths {x.dtype.itemsize} and {dtype.itemsize}")
    return x.view(dtype)
