"""nn.Linear / F.linear -> Gemm (2-D input) or MatMul(+Add); nn.Bilinear / F.bilinear ->
one Einsum."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Linear")
def linear_module(ctx, op):
    weight = ctx.attr(op, "weight")
    bias = ctx.attr_weight(op, "bias") if "bias" in op.attrs else None
    if ctx.rank(op.inputs[0]) == 2:
        w = ctx.attr_weight(op, "weight")
        ctx.node("Gemm", [ctx.x(op), w] + ([bias] if bias else []), ctx.y(op), transB=1)
        return
    # MatMul wants (in, out): store the weight pre-transposed instead of adding a Transpose
    w = ctx.attr_weight(op, "weight", weight.T)
    if bias is None:
        ctx.node("MatMul", [ctx.x(op), w], ctx.y(op))
    else:
        ctx.node("Add", [ctx.node("MatMul", [ctx.x(op), w]), bias], ctx.y(op))


@LOWERINGS.register("F.linear")
def linear_function(ctx, op):
    weight, bias = op.input("weight", 1), op.input("bias", 2)
    if weight is None:
        raise Unsupported("no weight input")
    extra = [bias.name] if bias is not None else []
    if ctx.rank(op.inputs[0]) == 2 and ctx.rank(weight) == 2:
        ctx.node("Gemm", [ctx.x(op), weight.name] + extra, ctx.y(op), transB=1)
        return
    wt = ctx.node("Transpose", [weight.name], perm=[1, 0])
    if not extra:
        ctx.node("MatMul", [ctx.x(op), wt], ctx.y(op))
    else:
        ctx.node("Add", [ctx.node("MatMul", [ctx.x(op), wt]), extra[0]], ctx.y(op))


@LOWERINGS.register("nn.Bilinear", "F.bilinear")
def bilinear(ctx, op):
    """y = x1 W x2^T + b: one Einsum (batch dims folded into `...`)."""
    x1, x2 = ctx.x(op, 0), ctx.x(op, 1)
    if op.type == "nn.Bilinear":
        weight = ctx.attr_weight(op, "weight")
        bias = ctx.attr_weight(op, "bias") if "bias" in op.attrs else None
    else:
        weight = op.input("weight", 2).name
        operand = op.input("bias", 3)
        bias = operand.name if operand is not None else None
    out = ctx.node("Einsum", [x1, weight, x2], 1 if bias else ctx.y(op), equation="...i,oij,...j->...o")
    if bias:
        ctx.node("Add", [out, bias], ctx.y(op))
