"""Matrix products: matmul, bmm, mm -> MatMul (by a constant 2-d matrix: InnerProduct/Gemm);
addmm (InnerProduct with a constant weight and bias, else MatMul + BinaryOp), mv, outer
(BinaryOp broadcasting of a column and a row), baddbmm; einsum -> Einsum.

torch.einsum -> Einsum (0=the equation as character codes). ncnn's Einsum knows the letters
i, j, k, l only, and loops the output's axes over them in that order: the output letters are
renamed i, j, ... in order and the summed letters follow, so at most four distinct letters and
an output of rank 1 to 4. The batch axis (the ncnn Mat batch) must be one letter, that of
every operand's batch axis and of the output's; its letter is dropped from the equation."""
from __future__ import annotations

import string

from collections import Counter

import numpy as np

from ....errors import AlongBatch, Unsupported
from ..arithmetic import ADD, MUL, scaled
from ..context import Context, dims_params, param, required_inputs
from ..inner_product import inner_product, inner_product_rows
from ..registry import LEADING, LOWERINGS


@LOWERINGS.register("torch.addmm", batch=LEADING)
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


@LOWERINGS.register("torch.matmul", "torch.bmm", "torch.mm", "Tensor.matmul", batch=LEADING)
def matmul(ctx: Context, op) -> None:
    a, b = op.inputs[0], op.inputs[1]
    if ctx.constant(b) is not None and len(ctx.torch_shape(b)) == 2 and op.type != "torch.bmm":
        inner_product(ctx, op, a, np.ascontiguousarray(ctx.constant(b).astype(np.float32).T), None)
        return
    # ncnn MatMul broadcasts as torch.matmul does (a vector on either side, leading dims)
    ctx.emit("MatMul", "matmul", [ctx.blob(a), ctx.blob(b)], [op.outputs[0].name], {0: 0})


def _with_rank(ctx: Context, operand, rank: int, base: str) -> str:
    """The operand's blob with leading 1s up to `rank`: ncnn's BinaryOp has its own rules for
    blobs of different ranks (a 1-d blob against a 3-d one runs along the channels), while at
    equal ranks it broadcasts size-1 dims as numpy does."""
    shape = ctx.shape(operand)
    if len(shape) >= rank:
        return ctx.blob(operand)
    return ctx.reshaped(ctx.blob(operand), [1] * (rank - len(shape)) + shape, base)


@LOWERINGS.register("torch.mv", "Tensor.mv", batch=LEADING)
def mv(ctx: Context, op) -> None:
    """A constant matrix is an InnerProduct on the vector; otherwise MatMul (matrix by vector)."""
    mat, vec = required_inputs(op, "input", "vec")
    out = op.outputs[0].name
    weight = ctx.constant(mat)
    if weight is not None and ctx.constant(vec) is None:
        inner_product_rows(ctx, ctx.blob(vec), ctx.shape(vec), out, weight.astype(np.float32), None)
        return
    if ctx.rank(mat) != 2 or ctx.rank(vec) != 1:
        raise AlongBatch(f"mv of blobs shaped {ctx.shape(mat)} and {ctx.shape(vec)} in ncnn (batch axis "
                          "dropped) is not lowered")
    ctx.emit("MatMul", "mv", [ctx.blob(mat), ctx.blob(vec)], [out], {0: 0})


@LOWERINGS.register("torch.outer", "Tensor.outer", "torch.ger", "Tensor.ger", batch=LEADING)
def outer(ctx: Context, op) -> None:
    """a[:, None] * b[None, :]: a column times a row, by BinaryOp broadcasting."""
    a, b = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    shape = ctx.shape(out)
    if len(shape) != 2:
        raise AlongBatch(f"outer product of shape {tuple(ctx.torch_shape(out))} with a batch axis")
    column = ctx.reshaped(ctx.blob(a), [shape[0], 1], out.name)
    row = ctx.reshaped(ctx.blob(b), [1, shape[1]], out.name)
    ctx.emit("BinaryOp", "outer", [column, row], [out.name], {0: MUL})


@LOWERINGS.register("torch.baddbmm", "Tensor.baddbmm", batch=LEADING)
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


def _parse(equation: str, ranks: list[int | None]) -> tuple[list[str], str]:
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    tokens = lhs.split(",")
    if len(tokens) != len(ranks):
        raise Unsupported(f"einsum equation {equation!r} names {len(tokens)} operands, got {len(ranks)}")
    if "." in equation:
        tokens, rhs = _expand_ellipsis(tokens, rhs if arrow else None, ranks)
    elif not arrow:  # implicit output: the letters seen once, sorted
        seen = Counter("".join(tokens))
        rhs = "".join(sorted(c for c, n in seen.items() if n == 1))
    return tokens, rhs


def _expand_ellipsis(tokens: list[str], rhs: str | None, ranks: list[int | None]) -> tuple[list[str], str]:
    """`...ij->...ji` with letters for the dims `...` stands for: an operand's own count of them
    (its rank less its letters), aligned from the right as torch broadcasts them; the output's
    `...` (or, implicit, its leading dims) gets the most of them."""
    if any(r is None for r in ranks) or any(t.count("...") > 1 or t.replace("...", "").count(".")
                                            for t in [*tokens, rhs or ""]):
        raise Unsupported("einsum with an ellipsis needs operand ranks and one `...` per operand")
    counts = [r - len(t.replace("...", "")) if "..." in t else 0 for t, r in zip(tokens, ranks)]
    spare = [c for c in string.ascii_letters if c not in "".join(tokens) + (rhs or "")]
    width = max(counts)
    if min(counts) < 0 or width > len(spare):
        raise Unsupported("einsum ellipsis does not fit the operand ranks")
    fill = spare[:width]
    tokens = [t.replace("...", "".join(fill[width - c:])) for t, c in zip(tokens, counts)]
    if rhs is None:  # implicit output: the ellipsis dims, then the letters seen once, sorted
        seen = Counter("".join(tokens))
        return tokens, "".join(fill) + "".join(sorted(c for c, n in seen.items() if n == 1 and c not in fill))
    return tokens, rhs.replace("...", "".join(fill))


def _drop_batch(ctx: Context, op, tokens: list[str], rhs: str) -> tuple[list[str], str]:
    """Remove the batch axis's letter, which ncnn runs sample by sample."""
    axes = [ctx.batch_axis(x) for x in op.inputs]
    out_axis = ctx.batch_axis(op.outputs[0])
    if out_axis is None and all(a is None for a in axes):
        return tokens, rhs
    letter = rhs[out_axis] if out_axis is not None and out_axis < len(rhs) else None
    for token, axis in zip(tokens, axes):
        batched = axis is not None and axis < len(token) and token[axis] == letter
        if letter is None or batched != (letter in token) or token.count(letter) > 1:
            raise AlongBatch("einsum sums or repeats the batch axis's letter")
    return [t.replace(letter, "") for t in tokens], rhs.replace(letter, "")


def _merged_letters(tokens: list[str], rhs: str) -> list[str]:
    """Runs of letters that every operand and the output holding one of them hold all of,
    adjacent and in the same order (maxvit's `GHID,GHJD->GHIJ`: G and H): each run can be one
    index over the product of its dims. Returns the runs, one string each."""
    words = [*tokens, rhs]
    letters = list(dict.fromkeys("".join(words)))
    if any(len(set(w)) != len(w) for w in words):
        return letters  # a repeated letter (a diagonal): merge nothing
    runs, used = [], set()
    for c in letters:
        if c in used:
            continue
        run = c
        while True:
            after = {w[w.index(run[-1]) + 1] if w.index(run[-1]) + 1 < len(w) else None for w in words if c in w}
            nxt = after.pop() if len(after) == 1 else None
            if nxt is None or nxt in used or nxt in run or any((nxt in w) != (c in w) for w in words):
                break
            run += nxt
        used.update(run)
        runs.append(run)
    return runs


def _merge(word: str, runs: list[str], shape: list[int] | None = None) -> tuple[str, list[int]]:
    """`word` with each run written as its first letter, and `shape` (a dim per letter) merged alike."""
    merged, dims, i = "", [], 0
    while i < len(word):
        run = next(r for r in runs if r[0] == word[i])
        merged += run[0]
        if shape is not None:
            dims.append(int(np.prod(shape[i:i + len(run)])))
        i += len(run)
    return merged, dims


def _tokens(ctx: Context, op) -> tuple[list[str], str]:
    """The equation's per-operand letters and output letters, per sample (the batch letter dropped)."""
    ranks = [len(x.shape) if x.shape is not None else None for x in op.inputs]
    tokens, rhs = _parse(str(param(op, "equation")), ranks)
    sizes: dict[str, set] = {}
    for token, x in zip(tokens, op.inputs):
        for letter, size in zip(token, x.shape or ()):
            sizes.setdefault(letter, set()).add(size)
    if any(len(s) > 1 for s in sizes.values()):
        raise Unsupported("einsum broadcasting a size-1 dim against another size: ncnn Einsum does not broadcast")
    return _drop_batch(ctx, op, tokens, rhs)


def ncnn_equation(ctx: Context, op, runs: list[str] | None = None) -> str:
    tokens, rhs = _tokens(ctx, op)
    if not rhs:
        raise Unsupported("einsum to a 0-d result is not lowered (ncnn Einsum writes rank 1 to 4)")
    if len(set(rhs)) != len(rhs):
        raise Unsupported(f"einsum output {rhs!r} repeats a letter")
    for token, operand in zip(tokens, op.inputs):
        if len(token) != ctx.rank(operand):
            raise Unsupported(f"einsum operand {operand.name} has rank {ctx.rank(operand)} in ncnn, "
                              f"the equation gives it {len(token)} indices")
    if runs is not None:
        tokens, rhs = [_merge(t, runs)[0] for t in tokens], _merge(rhs, runs)[0]
    summed = [c for c in dict.fromkeys("".join(tokens)) if c not in rhs]
    order = list(rhs) + summed
    if len(order) > len(NCNN_LETTERS):
        raise Unsupported(f"einsum over {len(order)} distinct indices: ncnn Einsum handles at most 4")
    rename = dict(zip(order, NCNN_LETTERS))
    return ",".join("".join(rename[c] for c in t) for t in tokens) + "->" + "".join(rename[c] for c in rhs)


def _letter_runs(ctx: Context, op) -> list[str] | None:
    """The runs of letters to merge when that brings an einsum over more than 4 indices to at most
    4; None otherwise."""
    tokens, rhs = _tokens(ctx, op)
    letters = set("".join(tokens))
    if len(letters) <= len(NCNN_LETTERS):
        return None
    runs = _merged_letters(tokens, rhs)
    return runs if len(runs) <= len(NCNN_LETTERS) else None


@LOWERINGS.register("torch.einsum", batch=LEADING)
def einsum(ctx: Context, op) -> None:
    runs = _letter_runs(ctx, op)
    equation = ncnn_equation(ctx, op, runs)
    if runs is None:
        ctx.emit("Einsum", "einsum", [ctx.blob(x) for x in op.inputs], [op.outputs[0].name],
                 {0: [ord(c) for c in equation]})
        return
    # each operand viewed with a run's dims as one, the result viewed back
    tokens, _ = _tokens(ctx, op)
    blobs = [ctx.reshaped(ctx.blob(x), _merge(t, runs, ctx.shape(x))[1], x.name) for t, x in zip(tokens, op.inputs)]
    out = op.outputs[0]
    product = ctx.temp(out.name)
    ctx.emit("Einsum", "einsum", blobs, [product], {0: [ord(c) for c in equation]})
    ctx.emit("Reshape", "reshape", [product], [out.name], dims_params(ctx.shape(out)))
