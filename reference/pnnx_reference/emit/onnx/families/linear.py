"""Linear algebra: nn.Linear / F.linear -> Gemm (2-D input) or MatMul(+Add), matmul family
-> MatMul, addmm -> Gemm, einsum -> Einsum, embeddings -> Gather."""
from __future__ import annotations

from ..registry import Unsupported, lowering


@lowering("nn.Linear")
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


@lowering("F.linear")
def linear_function(b, op):
    weight, bias = b.named_input(op, "weight", 1), b.named_input(op, "bias", 2)
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


@lowering("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm")
def matmul(b, op):
    other = b.named_input(op, "other", 1) or b.named_input(op, "mat2", 1)
    if other is None:
        raise Unsupported("no second operand")
    b.node("MatMul", [b.x(op), other.name], b.y(op))


@lowering("torch.addmm", "Tensor.addmm")
def addmm(b, op):
    c, m1, m2 = (b.named_input(op, k, i) for i, k in enumerate(("input", "mat1", "mat2")))
    if None in (c, m1, m2):
        raise Unsupported("addmm needs input, mat1 and mat2 operands")
    b.node("Gemm", [m1.name, m2.name, c.name], b.y(op),
           alpha=float(op.params.get("alpha", 1.0)), beta=float(op.params.get("beta", 1.0)))


@lowering("torch.einsum")
def einsum(b, op):
    equation = op.params.get("equation")
    if not isinstance(equation, str) or "..." in equation:
        raise Unsupported(f"equation={equation!r}")
    b.node("Einsum", [o.name for o in op.inputs], b.y(op), equation=equation)


@lowering("nn.Embedding")
def embedding_module(b, op):
    if op.params.get("max_norm") is not None:
        raise Unsupported("max_norm renormalises weights at run time")
    b.node("Gather", [b.attr_weight(op, "weight"), b.x(op)], b.y(op), axis=0)


@lowering("F.embedding")
def embedding_function(b, op):
    weight = b.named_input(op, "weight", 1)
    if weight is None or op.params.get("max_norm") is not None:
        raise Unsupported("needs a weight input and max_norm=None")
    b.node("Gather", [weight.name, b.x(op)], b.y(op), axis=0)
