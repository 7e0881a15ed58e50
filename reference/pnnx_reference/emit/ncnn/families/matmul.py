"""Matrix products: matmul, bmm, mm -> MatMul (by a constant 2-d matrix: InnerProduct/Gemm);
addmm (InnerProduct with a constant weight and bias, else MatMul + BinaryOp), mv, outer
(BinaryOp broadcasting of a column and a row), baddbmm; einsum -> Einsum.

torch.einsum -> Einsum (0=the equation as character codes). ncnn's Einsum knows the letters
i, j, k, l only, and loops the output's axes over them in that order: the output letters are
renamed i, j, ... in order and the summed letters follow, so at most four distinct letters and
an output of rank 1 to 4. A batch-1 axis (dropped from ncnn blobs) must be the leading letter
of every batched operand and of the output; a batchless graph keeps every axis."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ....errors import Unsupported
from ..arithmetic import ADD, MUL, scaled
from ..context import Context, param, required_inputs
from ..inner_product import inner_product, inner_product_rows
from ..registry import LOWERINGS


@LOWERINGS.register("torch.addmm", batchless=True)
def addmm(ctx: Context, op) -> None:
    """addmm(input=bias, mat1=x, mat2=W^T): InnerProduct with constant W and 1-d bias,
    otherwise MatMul, scaled, plus input (BinaryOp broadcasting)."""
    inp, x, w = required_inputs(op, "input", "mat1", "mat2")
    bias, weight = ctx.constant(inp), ctx.constant(w)
    beta, alpha = float(param(op, "beta", 1.0)), float(param(op, "alpha", 1.0))
    if bias is not None and weight is not None and bias.ndim <= 1:
        inner_product(ctx, op, x, np.ascontiguousarray(weight.astype(np.float32).T * alpha),
                      np.broadcast_to(bias.astype(np.float32), weight.shape[1:]) * beta)
        return
    out = op.outputs[0].name
    product = ctx.temp(out)
    ctx.emit("MatMul", "matmul", [ctx.blob(x), ctx.blob(w)], [product], {0: 0})
    product = scaled(ctx, product, alpha, out)
    ctx.emit("BinaryOp", "add", [product, scaled(ctx, ctx.blob(inp), beta, out)], [out], {0: 0})


@LOWERINGS.register("torch.matmul", "torch.bmm", "torch.mm", "Tensor.matmul", batchless=True)
def matmul(ctx: Context, op) -> None:
    a, b = op.inputs[0], op.inputs[1]
    if ctx.constant(b) is not None and len(ctx.torch_shape(b)) == 2 and op.type != "torch.bmm":
        inner_product(ctx, op, a, np.ascontiguousarray(ctx.constant(b).astype(np.float32).T), None)
        return
    ra, rb = ctx.rank(a), ctx.rank(b)
    if ra != rb:
        raise Unsupported(f"matmul of rank-{ra + 1} by rank-{rb + 1} tensors (broadcast batch) is not lowered")
    ctx.emit("MatMul", "matmul", [ctx.blob(a), ctx.blob(b)], [op.outputs[0].name], {0: 0})


def _with_rank(ctx: Context, operand, rank: int, base: str) -> str:
    """The operand's blob with leading 1s up to `rank`: ncnn's BinaryOp has its own rules for
    blobs of different ranks (a 1-d blob against a 3-d one runs along the channels), while at
    equal ranks it broadcasts size-1 dims as numpy does."""
    shape = ctx.shape(operand)
    if len(shape) >= rank:
        return ctx.blob(operand)
    return ctx.reshaped(ctx.blob(operand), [1] * (rank - len(shape)) + shape, base)


@LOWERINGS.register("torch.mv", "Tensor.mv", batchless=True)
def mv(ctx: Context, op) -> None:
    """A constant matrix is an InnerProduct on the vector; otherwise MatMul (matrix by vector)."""
    mat, vec = required_inputs(op, "input", "vec")
    out = op.outputs[0].name
    weight = ctx.constant(mat)
    if weight is not None and ctx.constant(vec) is None:
        inner_product_rows(ctx, ctx.blob(vec), ctx.shape(vec), out, weight.astype(np.float32), None)
        return
    if ctx.rank(mat) != 2 or ctx.rank(vec) != 1:
        raise Unsupported(f"mv of blobs shaped {ctx.shape(mat)} and {ctx.shape(vec)} in ncnn (batch axis "
                          "dropped) is not lowered")
    ctx.emit("MatMul", "mv", [ctx.blob(mat), ctx.blob(vec)], [out], {0: 0})


@LOWERINGS.register("torch.outer", "Tensor.outer", "torch.ger", "Tensor.ger", batchless=True)
def outer(ctx: Context, op) -> None:
    """a[:, None] * b[None, :]: a column times a row, by BinaryOp broadcasting."""
    a, b = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    shape = ctx.shape(out)
    if len(shape) != 2:
        raise Unsupported(f"outer product of shape {tuple(ctx.torch_shape(out))} with a batch axis: "
                          "ncnn blobs have no batch axis")
    column = ctx.reshaped(ctx.blob(a), [shape[0], 1], out.name)
    row = ctx.reshaped(ctx.blob(b), [1, shape[1]], out.name)
    ctx.emit("BinaryOp", "outer", [column, row], [out.name], {0: MUL})


@LOWERINGS.register("torch.baddbmm", "Tensor.baddbmm", batchless=True)
def baddbmm(ctx: Context, op) -> None:
    """beta * input + alpha * (batch1 @ batch2): MatMul, scaled, plus the input brought to the
    output's rank; with beta 0 the input is ignored (torch does not read it either)."""
    inp, b1, b2 = required_inputs(op, "input", "batch1", "batch2")
    beta, alpha = float(param(op, "beta", 1.0)), float(param(op, "alpha", 1.0))
    out = op.outputs[0].name
    product = out if beta == 0.0 and alpha == 1.0 else ctx.temp(out)
    ctx.emit("MatMul", "matmul", [ctx.blob(b1), ctx.blob(b2)], [product], {0: 0})
    if beta == 0.0:
        if product != out:
            ctx.emit("BinaryOp", "mul", [product], [out], {0: MUL, 1: 1, 2: alpha})
        return
    bias = scaled(ctx, _with_rank(ctx, inp, ctx.rank(op.outputs[0]), out), beta, out)
    ctx.emit("BinaryOp", "add", [scaled(ctx, product, alpha, out), bias], [out], {0: ADD})


NCNN_LETTERS = "ijkl"


def _parse(equation: str, count: int) -> tuple[list[str], str]:
    equation = equation.replace(" ", "")
    if "." in equation:
        raise Unsupported("einsum with an ellipsis (...) is not lowered")
    lhs, arrow, rhs = equation.partition("->")
    tokens = lhs.split(",")
    if len(tokens) != count:
        raise Unsupported(f"einsum equation {equation!r} names {len(tokens)} operands, got {count}")
    if not arrow:  # implicit output: the letters seen once, sorted
        seen = Counter("".join(tokens))
        rhs = "".join(sorted(c for c, n in seen.items() if n == 1))
    return tokens, rhs


def _drop_batch(ctx: Context, op, tokens: list[str], rhs: str) -> tuple[list[str], str]:
    """Remove the batch-1 letter, which ncnn blobs do not carry."""
    if ctx.batchless:
        return tokens, rhs
    batched = [ctx.has_batch(x) for x in op.inputs]
    letter = rhs[:1]
    if not ctx.has_batch(op.outputs[0]) or not letter or any(
            b != t.startswith(letter) or letter in t[1:] for t, b in zip(tokens, batched)):
        raise Unsupported("einsum must keep the batch axis as the leading letter of every operand and of "
                          "the output: ncnn blobs have no batch axis")
    return [t[1:] if b else t for t, b in zip(tokens, batched)], rhs[1:]


def ncnn_equation(ctx: Context, op) -> str:
    tokens, rhs = _parse(str(param(op, "equation")), len(op.inputs))
    tokens, rhs = _drop_batch(ctx, op, tokens, rhs)
    if not rhs:
        raise Unsupported("einsum to a 0-d result is not lowered (ncnn Einsum writes rank 1 to 4)")
    if len(set(rhs)) != len(rhs):
        raise Unsupported(f"einsum output {rhs!r} repeats a letter")
    summed = [c for c in dict.fromkeys("".join(tokens)) if c not in rhs]
    order = list(rhs) + summed
    if len(order) > len(NCNN_LETTERS):
        raise Unsupported(f"einsum over {len(order)} distinct indices: ncnn Einsum handles at most 4")
    for token, operand in zip(tokens, op.inputs):
        if len(token) != ctx.rank(operand):
            raise Unsupported(f"einsum operand {operand.name} has rank {ctx.rank(operand)} in ncnn, "
                              f"the equation gives it {len(token)} indices")
    rename = dict(zip(order, NCNN_LETTERS))
    return ",".join("".join(rename[c] for c in t) for t in tokens) + "->" + "".join(rename[c] for c in rhs)


@LOWERINGS.register("torch.einsum", batchless=True)
def einsum(ctx: Context, op) -> None:
    equation = ncnn_equation(ctx, op)
    ctx.emit("Einsum", "einsum", [ctx.blob(x) for x in op.inputs], [op.outputs[0].name],
             {0: [ord(c) for c in equation]})
