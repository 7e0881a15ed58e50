"""Linear-algebra operators built from ncnn's MatMul, BinaryOp broadcasting and InnerProduct:
mv, outer, baddbmm, bilinear; tril/triu (a constant 0/1 mask); argmax/argmin (Reduction,
Threshold and a constant position ramp). Every lowering reads the layout from the operand shapes,
so it also lowers batchless graphs."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, dims_params, named_input, param
from .layers import Weight
from .linear import inner_product_rows, scaled
from .reduce import REDUCE_MAX, REDUCE_MIN
from .registry import lowers

# ncnn BinaryOp, UnaryOp and Reduction operation codes
ADD, SUB, MUL, RSUB = 0, 1, 2, 7
ABS = 0
# layer featmask (param 31) keeping an index computation in fp32 on the CPU: no fp16 arithmetic (1),
# no fp16 storage (2), no bf16 storage (4), no vulkan (16); fp16 counts exactly only up to 2048
FP32_ONLY = 1 | 2 | 4 | 16


def _inputs(op, *names: str) -> list:
    """The operands of `op` named `names` (positional when the capture recorded no names)."""
    found = [named_input(op, name, i) for i, name in enumerate(names)]
    missing = [name for name, operand in zip(names, found) if operand is None]
    if missing:
        raise CannotLower(f"{op.type} without its {', '.join(missing)} operand")
    return found


def reshaped(ctx: Context, blob: str, shape: list[int], base: str) -> str:
    """`blob` viewed as ncnn `shape` (a new temp blob)."""
    _check_rank(shape)
    target = ctx.temp(base)
    if len(shape) == 1:
        ctx.emit("Flatten", "flatten", [blob], [target])
    else:
        ctx.emit("Reshape", "reshape", [blob], [target], dims_params(shape))
    return target


def _with_rank(ctx: Context, operand, rank: int, base: str) -> str:
    """The operand's blob with leading 1s up to `rank`: ncnn's BinaryOp has its own rules for
    blobs of different ranks (a 1-d blob against a 3-d one runs along the channels), while at
    equal ranks it broadcasts size-1 dims as numpy does."""
    shape = ctx.shape(operand)
    if len(shape) >= rank:
        return ctx.blob(operand)
    return reshaped(ctx, ctx.blob(operand), [1] * (rank - len(shape)) + shape, base)


@lowers("torch.mv", "Tensor.mv")
def mv(ctx: Context, op) -> None:
    """A constant matrix is an InnerProduct on the vector; otherwise MatMul (matrix by vector)."""
    mat, vec = _inputs(op, "input", "vec")
    out = op.outputs[0].name
    weight = ctx.constant(mat)
    if weight is not None and ctx.constant(vec) is None:
        inner_product_rows(ctx, ctx.blob(vec), ctx.shape(vec), out, weight.astype(np.float32), None)
        return
    if ctx.rank(mat) != 2 or ctx.rank(vec) != 1:
        raise CannotLower(f"mv of blobs shaped {ctx.shape(mat)} and {ctx.shape(vec)} in ncnn (batch axis "
                          "dropped) is not lowered")
    ctx.emit("MatMul", "mv", [ctx.blob(mat), ctx.blob(vec)], [out], {0: 0})


@lowers("torch.outer", "Tensor.outer", "torch.ger", "Tensor.ger")
def outer(ctx: Context, op) -> None:
    """a[:, None] * b[None, :]: a column times a row, by BinaryOp broadcasting."""
    a, b = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    shape = ctx.shape(out)
    if len(shape) != 2:
        raise CannotLower(f"outer product of shape {tuple(ctx.torch_shape(out))} with a batch axis: "
                          "ncnn blobs have no batch axis")
    column = reshaped(ctx, ctx.blob(a), [shape[0], 1], out.name)
    row = reshaped(ctx, ctx.blob(b), [1, shape[1]], out.name)
    ctx.emit("BinaryOp", "outer", [column, row], [out.name], {0: MUL})


@lowers("torch.baddbmm", "Tensor.baddbmm")
def baddbmm(ctx: Context, op) -> None:
    """beta * input + alpha * (batch1 @ batch2): MatMul, scaled, plus the input brought to the
    output's rank; with beta 0 the input is ignored (torch does not read it either)."""
    inp, b1, b2 = _inputs(op, "input", "batch1", "batch2")
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


def _bilinear_weights(ctx: Context, op) -> tuple[np.ndarray, np.ndarray | None]:
    if op.type == "nn.Bilinear":
        bias = op.attrs.get("bias")
        return op.attrs["weight"].to_numpy(), None if bias is None else bias.to_numpy()
    names = op.inputnames or ["input1", "input2", "weight", "bias"][:len(op.inputs)]
    values = {n: ctx.constant(op.inputs[names.index(n)]) for n in ("weight", "bias") if n in names}
    if values.get("weight") is None or ("bias" in names and values["bias"] is None):
        raise CannotLower("bilinear with a weight or bias computed at run time is not lowered")
    return values["weight"], values.get("bias")


@lowers("nn.Bilinear", "F.bilinear")
def bilinear(ctx: Context, op) -> None:
    """y_k = x1 A_k x2 + b_k: per row the outer product x1 x2^T ((in1, 1) by (1, in2) BinaryOp
    broadcasting), flattened to in1*in2, then InnerProduct/Gemm with A_k flattened the same way."""
    x1, x2 = op.inputs[0], op.inputs[1]
    weight, bias = _bilinear_weights(ctx, op)
    out_features, in1, in2 = weight.shape
    lead = ctx.shape(x1)[:-1]
    if ctx.shape(x2)[:-1] != lead:
        raise CannotLower(f"bilinear of inputs {tuple(ctx.torch_shape(x1))} and {tuple(ctx.torch_shape(x2))} "
                          "with different leading dims is not lowered")
    out = op.outputs[0].name
    column = reshaped(ctx, ctx.blob(x1), [*lead, in1, 1], out)
    row = reshaped(ctx, ctx.blob(x2), [*lead, 1, in2], out)
    products = ctx.temp(out)
    ctx.emit("BinaryOp", "bilinear", [column, row], [products], {0: MUL})
    flat = reshaped(ctx, products, [*lead, in1 * in2], out)
    inner_product_rows(ctx, flat, [*lead, in1 * in2], out,
                       np.ascontiguousarray(weight.astype(np.float32).reshape(out_features, in1 * in2)),
                       None if bias is None else bias.astype(np.float32))


def triangle_mask(rows: int, cols: int, diagonal: int, lower: bool) -> np.ndarray:
    """1 where tril (lower) / triu keeps an element of a rows x cols matrix, else 0."""
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    return (offset <= diagonal if lower else offset >= diagonal).astype(np.float32)


def _triangle(ctx: Context, op, lower: bool) -> None:
    """x times a constant 0/1 mask (MemoryData) of the last two dims, broadcast over the others.
    An inf or nan outside the triangle becomes nan (torch writes 0 there)."""
    src, out = op.inputs[0], op.outputs[0]
    torch_shape = ctx.torch_shape(src)
    diagonal = param(op, "diagonal", 0)
    if len(torch_shape) < 2 or not isinstance(diagonal, int):
        raise CannotLower(f"{op.type} needs a matrix and a constant diagonal")
    mask = triangle_mask(*torch_shape[-2:], diagonal, lower)
    rank = ctx.rank(src)
    mask_shape = ([1] * (len(torch_shape) - 2) + list(mask.shape))[len(torch_shape) - rank:]
    mask_blob = ctx.temp(out.name)
    ctx.emit("MemoryData", "tril" if lower else "triu", [], [mask_blob], dims_params(mask_shape),
             [Weight(mask.reshape(-1), tagged=False)])
    ctx.emit("BinaryOp", "mask", [ctx.blob(src), mask_blob], [out.name], {0: MUL})


@lowers("torch.tril", "Tensor.tril")
def tril(ctx: Context, op) -> None:
    _triangle(ctx, op, lower=True)


@lowers("torch.triu", "Tensor.triu")
def triu(ctx: Context, op) -> None:
    _triangle(ctx, op, lower=False)


def _arg_extreme(ctx: Context, op, operation: int) -> None:
    """Index of the first max (min) along dim, or of the flattened tensor. Built from exact steps,
    since ncnn's ArgMax layer is not built by default (nor in the ncnn installed here) and
    reports the last of equal maxima: hit = 1 where x is the extreme; score = hit * (n - i)
    along the axis, highest at the first hit; index = n - max(score).
    A nan in x is not reported as the extreme (torch reports it)."""
    src, out = op.inputs[0], op.outputs[0]
    dim, blob, shape = param(op, "dim"), ctx.blob(src), ctx.shape(src)
    if dim is None:
        shape = [math.prod(shape)]
        blob = reshaped(ctx, blob, shape, out.name) if ctx.rank(src) > 1 else blob
    axis = 0 if dim is None else ctx.axis(src, int(dim))
    n = shape[axis]
    if n > 1 << 24:
        raise CannotLower(f"{op.type} over {n} > 2^24 elements: the index is not exact as a float")
    hit = _hits(ctx, blob, shape, axis, operation, out.name)
    positions, score, top = (ctx.temp(out.name) for _ in range(3))
    ramp_shape = [n if i == axis else 1 for i in range(len(shape))]
    ctx.emit("MemoryData", "arg_positions", [], [positions], {**dims_params(ramp_shape), 31: FP32_ONLY},
             [Weight(np.arange(n, 0, -1, dtype=np.float32), tagged=False)])
    ctx.emit("BinaryOp", "arg_score", [hit, positions], [score], {0: MUL, 31: FP32_ONLY})
    keepdim = bool(param(op, "keepdim", False)) and dim is not None
    ctx.emit("Reduction", "arg_top", [score], [top],
             {**_reduce_params(REDUCE_MAX, shape, axis, keep=keepdim), 31: FP32_ONLY})
    ctx.emit("BinaryOp", "arg_index", [top], [out.name], {0: RSUB, 1: 1, 2: float(n), 31: FP32_ONLY})


def _hits(ctx: Context, blob: str, shape: list[int], axis: int, operation: int, base: str) -> str:
    """1 exactly where x equals its extreme along the axis, else 0: 1 - Threshold(|x - best|)."""
    best, diff, size, miss, hit = (ctx.temp(base) for _ in range(5))
    ctx.emit("Reduction", "arg_best", [blob], [best], _reduce_params(operation, shape, axis, keep=True))
    ctx.emit("BinaryOp", "arg_diff", [blob, best], [diff], {0: SUB})
    ctx.emit("UnaryOp", "arg_abs", [diff], [size], {0: ABS})
    ctx.emit("Threshold", "arg_miss", [size], [miss], {0: 0.0})
    ctx.emit("BinaryOp", "arg_hit", [miss], [hit], {0: RSUB, 1: 1, 2: 1.0})
    return hit


def _check_rank(shape: list[int]) -> None:
    if len(shape) > 4:
        raise CannotLower(f"a rank-{len(shape)} blob (ncnn blobs have at most 4 dims)")


def _reduce_params(operation: int, shape: list[int], axis: int, keep: bool) -> dict:
    if len(shape) == 1:
        return {0: operation, 1: 1, 4: int(keep), 5: 1}
    return {0: operation, 1: 0, 3: [axis], 4: int(keep), 5: 1}


@lowers("torch.argmax", "Tensor.argmax")
def argmax(ctx: Context, op) -> None:
    _arg_extreme(ctx, op, REDUCE_MAX)


@lowers("torch.argmin", "Tensor.argmin")
def argmin(ctx: Context, op) -> None:
    _arg_extreme(ctx, op, REDUCE_MIN)
