"""nn.Linear / F.linear -> Gemm (2-D input) or MatMul(+Add); nn.Bilinear / F.bilinear ->
one Einsum."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Linear")
def linear_module(b, op):
    weight = b.attr(op, "weight")
    bias = b.attr_weight(op, "bias") if "bias" in op.attrs else None
    if b.rank(op.inputs[0]) == 2:
        w = b.attr_weight(op, "weight")
        b.node("Gemm", [b.x(op), w] + ([bias] if bias else []), b.y(op), transB=1)
        return
    # MatMul wants (in, out): store the weight pre-transposed instead of adding a Transpose
    w = b.attr_weight(op, "weight", weight.T.copy())
    if bias is None:
        b.node("MatMul", [b.x(op), w], b.y(op))
    else:
        b.node("Add", [b.node("MatMul", [b.x(op), w]), bias], b.y(op))


@LOWERINGS.register("F.linear")
def linear_function(b, op):
    weight, bias = op.input("weight", 1), op.input("bias", 2)
    if weight is None:
        raise Unsupported("no weight input")
    extra = [bias.name] if bias is not None else []
    if b.rank(op.inputs[0]) == 2 and b.rank(weight) == 2:
        b.node("Gemm", [b.x(op), weight.name] + extra, b.y(op), transB=1)
        return
    wt = b.node("Transpose", [weight.name], perm=[1, 0])
    if not extra:
        b.node("MatMul", [b.x(op), wt], b.y(op))
    else:
        b.node("Add", [b.node("MatMul", [b.x(op), wt]), extra[0]], b.y(op))


@LOWERINGS.register("nn.Bilinear", "F.bilinear")
def bilinear(b, op):
    """y = x1 W x2^T + b: one Einsum (batch dims folded into `...`)."""
    x1, x2 = b.x(op, 0), b.x(op, 1)
    if op.type == "nn.Bilinear":
        weight = b.attr_weight(op, "weight")
        bias = b.attr_weight(op, "bias") if "bias" in op.attrs else None
    else:
        weight = op.input("weight", 2).name
        operand = op.input("bias", 3)
        bias = operand.name if operand is not None else None
    out = b.node("Einsum", [x1, weight, x2], 1 if bias else b.y(op), equation="...i,oij,...j->...o")
    if bias:
        b.node("Add", [out, bias], b.y(op))
