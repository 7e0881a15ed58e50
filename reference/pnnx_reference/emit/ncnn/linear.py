"""Linear / addmm -> InnerProduct; matmul, bmm, mm -> MatMul; Embedding -> Embed."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, dims_params, param
from .layers import Weight
from .registry import lowers


def _const(ctx: Context, op, name: str, position: int):
    names = op.inputnames or []
    idx = names.index(name) if name in names else (position if not names else None)
    if idx is None or idx >= len(op.inputs):
        return None
    value = ctx.constant(op.inputs[idx])
    if value is None:
        raise CannotLower(f"{name} is not a constant")
    return value.astype(np.float32)


def _inner_product(ctx: Context, op, src_operand, weight: np.ndarray, bias) -> None:
    """InnerProduct over the last dim; a >1-d blob is flattened to rows and reshaped back."""
    out_features, in_features = weight.shape
    p = {0: int(out_features), 1: int(bias is not None), 2: int(weight.size)}
    weights = [Weight(weight.reshape(-1), tagged=True)]
    if bias is not None:
        weights.append(Weight(bias.reshape(-1), tagged=False))
    shape = ctx.shape(src_operand)
    src = ctx.blob(src_operand)
    out = op.outputs[0].name
    if len(shape) <= 2:
        ctx.emit("InnerProduct", "linear", [src], [out], p, weights)
        return
    rows = int(math.prod(shape[:-1]))
    flat, flat_out = ctx.temp(out), ctx.temp(out)
    ctx.emit("Reshape", "reshape", [src], [flat], dims_params([rows, in_features]))
    ctx.emit("InnerProduct", "linear", [flat], [flat_out], p, weights)
    ctx.emit("Reshape", "reshape", [flat_out], [out], dims_params([*shape[:-1], int(out_features)]))


@lowers("nn.Linear", "F.linear")
def linear(ctx: Context, op) -> None:
    weight = op.attrs["weight"].to_numpy().astype(np.float32) if "weight" in op.attrs else _const(ctx, op, "weight", 1)
    if weight is None:
        raise CannotLower("linear without weight")
    if "bias" in op.attrs:
        bias = op.attrs["bias"].to_numpy().astype(np.float32)
    else:
        bias = None if op.type.startswith("nn.") else _const(ctx, op, "bias", 2)
    _inner_product(ctx, op, op.inputs[0], weight, bias)


@lowers("torch.addmm")
def addmm(ctx: Context, op) -> None:
    """addmm(input=bias, mat1=x, mat2=W^T) with constant W and bias."""
    bias, weight = _const(ctx, op, "input", 0), _const(ctx, op, "mat2", 2)
    x = op.inputs[(op.inputnames or ["input", "mat1", "mat2"]).index("mat1")]
    beta, alpha = float(param(op, "beta", 1.0)), float(param(op, "alpha", 1.0))
    if bias is None or weight is None or bias.ndim > 1:
        raise CannotLower("addmm lowers only with a constant 1-d input and constant mat2")
    _inner_product(ctx, op, x, np.ascontiguousarray(weight.T * alpha), bias * beta)


@lowers("torch.matmul", "torch.bmm", "torch.mm", "Tensor.matmul")
def matmul(ctx: Context, op) -> None:
    a, b = op.inputs[0], op.inputs[1]
    if ctx.constant(b) is not None and len(ctx.torch_shape(b)) == 2 and op.type != "torch.bmm":
        _inner_product(ctx, op, a, np.ascontiguousarray(ctx.constant(b).astype(np.float32).T), None)
        return
    ra, rb = ctx.rank(a), ctx.rank(b)
    if ra != rb:
        raise CannotLower(f"matmul of rank-{ra + 1} by rank-{rb + 1} tensors (broadcast batch) is not lowered")
    ctx.emit("MatMul", "matmul", [ctx.blob(a), ctx.blob(b)], [op.outputs[0].name], {0: 0})


@lowers("nn.Embedding", "F.embedding")
def embedding(ctx: Context, op) -> None:
    weight = op.attrs["weight"].to_numpy() if "weight" in op.attrs else _const(ctx, op, "weight", 1)
    if weight is None:
        raise CannotLower("embedding without a constant weight")
    num, dim = weight.shape
    if ctx.rank(op.inputs[0]) != 1:
        raise CannotLower("ncnn Embed takes a (1,n) index tensor")
    ctx.emit("Embed", "embed", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(dim), 1: int(num), 2: 0, 3: int(weight.size)},
             [Weight(weight.astype(np.float32).reshape(-1), tagged=True)])
