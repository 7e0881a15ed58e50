"""Arithmetic as Python operators, so the tracer records pnnx.Expression."""
from __future__ import annotations

import operator

import torch

from ..registry import rule


@rule("add", "sub")
def _add_sub(name, kw):
    other = kw["other"] if kw.get("alpha", 1) == 1 else kw["other"] * kw["alpha"]
    return kw["self"] + other if name == "add" else kw["self"] - other


@rule("rsub")
def _rsub(name, kw):
    other = kw["other"] if kw.get("alpha", 1) == 1 else kw["other"] * kw["alpha"]
    return other - kw["self"]


_BINARY = {"mul": operator.mul, "pow": operator.pow, "remainder": operator.mod,
           "floor_divide": operator.floordiv, "matmul": operator.matmul, "__and__": operator.and_,
           "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
           "__rshift__": operator.rshift}


@rule(*_BINARY)
def _binary(name, kw):
    second = kw.get("other", kw.get("exponent"))
    return _BINARY[name](kw["self"], second)


@rule("bitwise_and", "bitwise_or", "bitwise_xor")
def _bitwise(name, kw):
    """Both operands by position, a Python number too (aten's `.Scalar` overload): the tracer
    writes the call as a pnnx.Expression (`and(@0,2)`), as on the Python door."""
    return getattr(torch, name)(kw["self"], kw["other"])


@rule("div")
def _div(name, kw):
    mode = kw.get("rounding_mode")
    if mode is None:
        return kw["self"] / kw["other"]
    if mode == "floor":
        return kw["self"] // kw["other"]
    return torch.div(kw["self"], kw["other"], rounding_mode=mode)


@rule("neg")
def _neg(name, kw):
    return -kw["self"]
