"""Matrix products: matmul/mm/bmm/mv -> MatMul, addmm -> Gemm, outer/ger -> Unsqueeze + Mul,
baddbmm -> MatMul + Add, einsum -> Einsum."""
from __future__ import annotations

from ....errors import Unsupported
from ..promote import float_node
from ..registry import LOWERINGS


@LOWERINGS.register("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm",
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


@LOWERINGS.register("torch.addmm", "Tensor.addmm")
def addmm(b, op):
    c, m1, m2 = (op.input(k, i) for i, k in enumerate(("input", "mat1", "mat2")))
    if None in (c, m1, m2):
        raise Unsupported("addmm needs input, mat1 and mat2 operands")
    b.node("Gemm", [m1.name, m2.name, c.name], b.y(op),
           alpha=float(op.params.get("alpha", 1.0)), beta=float(op.params.get("beta", 1.0)))


@LOWERINGS.register("torch.einsum")
def einsum(b, op):
    equation = op.params.get("equation")
    if not isinstance(equation, str) or "..." in equation:
        raise Unsupported(f"equation={equation!r}")
    float_node(b, op, "Einsum", [o.name for o in op.inputs], equation=equation)


@LOWERINGS.register("torch.outer", "Tensor.outer", "torch.ger")
def outer(b, op):
    column = b.node("Unsqueeze", [b.x(op, 0), b.const([1], hint="axes")])
    b.node("Mul", [column, b.x(op, 1)], b.y(op))


@LOWERINGS.register("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(b, op):
    """beta * input + alpha * (batch1 @ batch2)."""
    dt = b.dtype(op.inputs[0])
    prod = b.node("MatMul", [b.x(op, 1), b.x(op, 2)])
    alpha, beta = op.params.get("alpha", 1), op.params.get("beta", 1)
    if alpha != 1:
        prod = b.node("Mul", [prod, b.const(alpha, dt, "alpha")])
    base = b.x(op, 0) if beta == 1 else b.node("Mul", [b.x(op, 0), b.const(beta, dt, "beta")])
    b.node("Add", [base, prod], b.y(op))
