"""Matrix products: matmul/mm/bmm/mv -> MatMul, addmm -> Gemm, outer/ger -> Unsqueeze + Mul,
baddbmm -> MatMul + Add, einsum -> Einsum."""
from __future__ import annotations

from ....errors import Unsupported
from ..promote import float_node
from ..registry import LOWERINGS


@LOWERINGS.register("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm",
                    "torch.mv", "Tensor.mv")
def matmul(ctx, op):
    if len(op.inputs) != 2:
        raise Unsupported("needs two operands")
    a, v = op.inputs
    if ctx.rank(v) != 1 or ctx.rank(a) == 1:
        ctx.node("MatMul", [a.name, v.name], ctx.y(op))
        return
    # onnxruntime 1.31 miscomputes Transpose->MatMul fused with a 1-D right operand
    # (FusedMatMul): multiply by a (K, 1) column instead, then drop that axis
    last = ctx.const([-1], hint="axes")
    column = ctx.node("Unsqueeze", [v.name, last])
    ctx.node("Squeeze", [ctx.node("MatMul", [a.name, column]), last], ctx.y(op))


@LOWERINGS.register("torch.addmm", "Tensor.addmm")
def addmm(ctx, op):
    c, m1, m2 = (op.input(k, i) for i, k in enumerate(("input", "mat1", "mat2")))
    if None in (c, m1, m2):
        raise Unsupported("addmm needs input, mat1 and mat2 operands")
    ctx.node("Gemm", [m1.name, m2.name, c.name], ctx.y(op),
           alpha=float(op.params.get("alpha", 1.0)), beta=float(op.params.get("beta", 1.0)))


@LOWERINGS.register("torch.einsum")
def einsum(ctx, op):
    equation = op.params.get("equation")
    if not isinstance(equation, str) or "..." in equation:
        raise Unsupported(f"equation={equation!r}")
    float_node(ctx, op, "Einsum", [o.name for o in op.inputs], equation=equation)


@LOWERINGS.register("torch.outer", "Tensor.outer", "torch.ger")
def outer(ctx, op):
    column = ctx.node("Unsqueeze", [ctx.x(op, 0), ctx.const([1], hint="axes")])
    ctx.node("Mul", [column, ctx.x(op, 1)], ctx.y(op))


@LOWERINGS.register("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(ctx, op):
    """beta * input + alpha * (batch1 @ batch2)."""
    dt = ctx.dtype(op.inputs[0])
    prod = ctx.node("MatMul", [ctx.x(op, 1), ctx.x(op, 2)])
    alpha, beta = op.params.get("alpha", 1), op.params.get("beta", 1)
    if alpha != 1:
        prod = ctx.node("Mul", [prod, ctx.const(alpha, dt, "alpha")])
    base = ctx.x(op, 0) if beta == 1 else ctx.node("Mul", [ctx.x(op, 0), ctx.const(beta, dt, "beta")])
    ctx.node("Add", [base, prod], ctx.y(op))
