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


@lowering("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm",
          "torch.mv", "Tensor.mv")
def matmul(b, op):
    if len(op.inputs) != 2:
        raise Unsupported("needs two operands")
    a, v = op.inputs
    if b.rank(v) != 1 or b.rank(a) == 1:
        b.node("MatMul", [a.name, v.name], b.y(op))
        return
    # onnxruntime 1.31 miscomputes Transpose->MatMul fused with a 1-D right operand
    # (FusedMatMul): multiply by a (K, 1) column instead, then drop that axis
    last = b.const([-1], hint="axes")
    column = b.node("Unsqueeze", [v.name, last])
    b.node("Squeeze", [b.node("MatMul", [a.name, column]), last], b.y(op))


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


@lowering("nn.Bilinear", "F.bilinear")
def bilinear(b, op):
    """y = x1 W x2^T + b: one Einsum (batch dims folded into `...`)."""
    x1, x2 = b.x(op, 0), b.x(op, 1)
    if op.type == "nn.Bilinear":
        weight = b.attr_weight(op, "weight")
        bias = b.attr_weight(op, "bias") if "bias" in op.attrs else None
    else:
        weight = b.named_input(op, "weight", 2).name
        operand = b.named_input(op, "bias", 3)
        bias = operand.name if operand is not None else None
    out = b.node("Einsum", [x1, weight, x2], 1 if bias else b.y(op), equation="...i,oij,...j->...o")
    if bias:
        b.node("Add", [out, bias], b.y(op))


@lowering("F.cosine_similarity", "nn.CosineSimilarity")
def cosine_similarity(b, op):
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) as torch computes it (no ONNX operator);
    operands broadcast along `dim` first, since that changes their norms."""
    rank = max(b.rank(o) for o in op.inputs)
    dim = op.params.get("dim", 1)
    dim = dim + rank if dim < 0 else dim
    axes = b.const([dim], hint="axes")
    eps = b.const(float(op.params.get("eps", 1e-8)), b.dtype(op.inputs[0]), "eps")
    shapes = [[1] * (rank - b.rank(o)) + b.shape(o) for o in op.inputs]
    size = max(s[dim] for s in shapes)
    units = []
    for operand, shape in zip(op.inputs, shapes):
        x = operand.name
        if shape[dim] != size:
            x = b.node("Expand", [x, b.const([1] * dim + [size] + [1] * (rank - dim - 1), hint="shape")])
        norm = b.node("Max", [b.node("ReduceL2", [x, axes], keepdims=1), eps])
        units.append(b.node("Div", [x, norm]))
    b.node("ReduceSum", [b.node("Mul", units), axes], b.y(op), keepdims=0)


@lowering("F.pairwise_distance", "nn.PairwiseDistance")
def pairwise_distance(b, op):
    """||x1 - x2 + eps||_p over the last dim."""
    p = float(op.params.get("p", op.params.get("norm", 2.0)))
    reduce = {1.0: "ReduceL1", 2.0: "ReduceL2"}.get(p)
    if reduce is None:
        raise Unsupported(f"p={p}")
    eps = b.const(float(op.params.get("eps", 1e-6)), b.dtype(op.inputs[0]), "eps")
    diff = b.node("Add", [b.node("Sub", [b.x(op, 0), b.x(op, 1)]), eps])
    b.node(reduce, [diff, b.const([-1], hint="axes")], b.y(op),
           keepdims=int(bool(op.params.get("keepdim", False))))


@lowering("torch.outer", "Tensor.outer", "torch.ger")
def outer(b, op):
    column = b.node("Unsqueeze", [b.x(op, 0), b.const([1], hint="axes")])
    b.node("Mul", [column, b.x(op, 1)], b.y(op))


@lowering("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(b, op):
    """beta * input + alpha * (batch1 @ batch2)."""
    dt = b.dtype(op.inputs[0])
    prod = b.node("MatMul", [b.x(op, 1), b.x(op, 2)])
    alpha, beta = op.params.get("alpha", 1), op.params.get("beta", 1)
    if alpha != 1:
        prod = b.node("Mul", [prod, b.const(alpha, dt, "alpha")])
    base = b.x(op, 0) if beta == 1 else b.node("Mul", [b.x(op, 0), b.const(beta, dt, "beta")])
    b.node("Add", [base, prod], b.y(op))
