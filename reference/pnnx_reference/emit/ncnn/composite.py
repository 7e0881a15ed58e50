"""Operators ncnn has no single layer for, built from several: elementwise formulas written as
pnnx expressions (lowered by binary.lower_tree), a Threshold mask, two-pass variance,
power-average pooling and the vector similarity/distance functions.

ncnn's BinaryOp pow computes exp(y * log(x)), which is garbage for x <= 0, so integer powers
are built from squares and products and a fractional power clamps its base to FLT_MIN first."""
from __future__ import annotations

import math

import numpy as np

from ... import expression as ex
from .binary import BINARY, MAX_INT_POWER, UNARY, int_power, lower_tree
from .context import CannotLower, Context, as_list, dims_params, param
from .pool import AVG, KERNEL, LAYER, MAX, STRIDE
from .reduce import REDUCE_L1, REDUCE_L2, REDUCE_MAX, REDUCE_MEAN, REDUCE_SUM, REDUCE_SUMSQ
from .registry import lowers

FLT_MIN = float(np.finfo(np.float32).tiny)

# op types -> (expression over @i, the argument bound to each @i: a tensor input or a number param)
EXPRESSIONS = {
    ("F.softsign", "nn.Softsign"): ("div(@0,add(abs(@0),1))", ("input",)),
    ("F.tanhshrink", "nn.Tanhshrink"): ("sub(@0,tanh(@0))", ("input",)),
    ("torch.addcmul",): ("add(@0,mul(mul(@1,@2),@3))", ("input", "tensor1", "tensor2", "value")),
    ("torch.addcdiv",): ("add(@0,mul(div(@1,@2),@3))", ("input", "tensor1", "tensor2", "value")),
}
DEFAULTS = {"value": 1, "eps": 1e-6}


def argument_nodes(op, names: tuple[str, ...]) -> dict[int, ex.Node]:
    """@i -> the operator input bound to names[i] (by keyword, or by position for nn.* modules),
    else a literal of its number param."""
    keys = op.inputnames or []
    nodes: dict[int, ex.Node] = {}
    for i, name in enumerate(names):
        value = param(op, name, DEFAULTS.get(name))
        if name in keys:
            nodes[i] = ex.input_ref(keys.index(name))
        elif not keys and i < len(op.inputs):
            nodes[i] = ex.input_ref(i)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            nodes[i] = ex.literal(value)
        else:
            raise CannotLower(f"{op.type} argument {name} is neither a tensor nor a number")
    return nodes


def _tensor_inputs(op, names: tuple[str, ...]) -> list:
    nodes = argument_nodes(op, names).values()
    if not all(isinstance(node, ex.Input) for node in nodes):
        raise CannotLower(f"{op.type} arguments {', '.join(names)} must be tensors")
    return [op.inputs[node.index] for node in nodes]


def _lower_expression(ctx: Context, op, text: str, names: tuple[str, ...], out: str) -> None:
    tree = ex.remap_inputs(ex.parse(text), argument_nodes(op, names))
    lower_tree(ctx, op, tree, op.inputs, out)


def _expression_lowering(text: str, names: tuple[str, ...]):
    return lambda ctx, op: _lower_expression(ctx, op, text, names, op.outputs[0].name)


for _types, (_text, _names) in EXPRESSIONS.items():
    lowers(*_types)(_expression_lowering(_text, _names))


# --- one-layer emitters on blobs of equal ncnn rank ---------------------------------------
def unary(ctx: Context, func: str, src: str, out: str) -> str:
    ctx.emit("UnaryOp", func, [src], [out], {0: UNARY[func]})
    return out


def binary(ctx: Context, func: str, a: str, b: str, out: str) -> str:
    ctx.emit("BinaryOp", func, [a, b], [out], {0: BINARY[func][0]})
    return out


def scalar(ctx: Context, func: str, src: str, number: float, out: str) -> str:
    ctx.emit("BinaryOp", func, [src], [out], {0: BINARY[func][0], 1: 1, 2: float(number)})
    return out


def reduction(ctx: Context, operation: int, src: str, axes, rank: int, keep: bool, out: str,
               coeff: float = 1.0) -> str:
    """Reduction over ncnn `axes` (None: every axis) of a blob of ncnn `rank`, times coeff."""
    if axes is None or (not keep and len(axes) == rank):
        params = {0: operation, 1: 1, 4: int(keep), 5: 1}
    else:
        params = {0: operation, 1: 0, 3: sorted(axes), 4: int(keep), 5: 1}
    if coeff != 1.0:
        params[2] = float(coeff)
    ctx.emit("Reduction", "reduce", [src], [out], params)
    return out


def _power(ctx: Context, src: str, p: float, base: str) -> str:
    """src ** p (p > 0)."""
    if float(p).is_integer() and 1 <= p <= MAX_INT_POWER:
        return int_power(ctx, src, int(p), ctx.temp(base))
    clamped = scalar(ctx, "max", src, FLT_MIN, ctx.temp(base))
    return scalar(ctx, "pow", clamped, p, ctx.temp(base))


def _root(ctx: Context, src: str, p: float, out: str) -> str:
    """src ** (1/p) for src >= 0 (p > 1): sqrt, else pow of src clamped away from 0."""
    if p == 2:
        return unary(ctx, "sqrt", src, out)
    clamped = scalar(ctx, "max", src, FLT_MIN, ctx.temp(out))
    return scalar(ctx, "pow", clamped, 1.0 / p, out)


# --- activations ------------------------------------------------------------------------------
@lowers("F.softmin", "nn.Softmin")
def softmin(ctx: Context, op) -> None:
    """softmax(-x)."""
    dim = param(op, "dim")
    if dim is None:
        raise CannotLower("softmin without dim")
    src, out = op.inputs[0], op.outputs[0].name
    negated = unary(ctx, "neg", ctx.blob(src), ctx.temp(out))
    ctx.emit("Softmax", "softmin", [negated], [out], {0: ctx.axis(src, int(dim)), 1: 1})


@lowers("torch.positive", "Tensor.positive")
def positive(ctx: Context, op) -> None:
    ctx.alias(op.outputs[0], op.inputs[0])


@lowers("F.rrelu", "F.rrelu_", "nn.RReLU")
def rrelu(ctx: Context, op) -> None:
    """In eval mode RReLU is a leaky ReLU with the mean slope (lower + upper) / 2."""
    if param(op, "training", False):
        raise CannotLower("RReLU with training=True draws random slopes: only training=False is lowered")
    slope = (float(param(op, "lower", 1.0 / 8)) + float(param(op, "upper", 1.0 / 3))) / 2
    ctx.emit("ReLU", "rrelu", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: slope})


@lowers("F.threshold", "F.threshold_", "nn.Threshold")
def threshold(ctx: Context, op) -> None:
    """x if x > threshold else value: x * m + value * (1 - m), m = ncnn Threshold (1 where x >
    threshold, else 0); each term is exactly x, value or 0."""
    limit, value = param(op, "threshold"), param(op, "value")
    if limit is None or value is None:
        raise CannotLower("threshold without threshold/value")
    x, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    mask = ctx.temp(out)
    ctx.emit("Threshold", "threshold", [x], [mask], {0: float(limit)})
    if float(value) == 0.0:
        binary(ctx, "mul", x, mask, out)
        return
    kept = binary(ctx, "mul", x, mask, ctx.temp(out))
    filler = scalar(ctx, "add", scalar(ctx, "mul", mask, -float(value), ctx.temp(out)), value, ctx.temp(out))
    binary(ctx, "add", kept, filler, out)


# --- variance and standard deviation ------------------------------------------------------------
def reduced_axes(ctx: Context, src, dims) -> tuple[list[int] | None, int]:
    """(ncnn axes or None for all, number of elements reduced) of a torch `dim` argument."""
    shape = ctx.torch_shape(src)
    if dims is None or dims == []:
        torch_dims, axes = list(range(len(shape))), None
    else:
        torch_dims = [int(d) for d in ([dims] if isinstance(dims, int) else dims)]
        axes = sorted({ctx.axis(src, d) for d in torch_dims})  # also checks each dim's range
    sizes = [shape[d] for d in torch_dims]
    if any(size < 0 for size in sizes):
        raise CannotLower("variance over a dynamic dim is not lowered")
    return axes, math.prod(sizes)


def _correction(op) -> float:
    correction = param(op, "correction")
    if correction is not None:
        return float(correction)
    return 1.0 if param(op, "unbiased", True) else 0.0


def _moments(ctx: Context, op, root: bool) -> None:
    """mean over dims (kept), then sum((x - mean)^2) / (n - correction), sqrt for std; a second
    output is the mean."""
    src = op.inputs[0]
    axes, count = reduced_axes(ctx, src, param(op, "dim"))
    correction = _correction(op)
    if count - correction <= 0:
        raise CannotLower(f"variance of {count} elements with correction {correction} divides by <= 0")
    keep, rank = bool(param(op, "keepdim", False)), ctx.rank(src)
    outs = op.outputs
    mean_out = outs[1].name if keep and len(outs) > 1 else ctx.temp(outs[0].name)
    mean = reduction(ctx, REDUCE_MEAN, ctx.blob(src), axes, rank, True, mean_out)
    centered = binary(ctx, "sub", ctx.blob(src), mean, ctx.temp(outs[0].name))
    var_out = ctx.temp(outs[0].name) if root else outs[0].name
    reduction(ctx, REDUCE_SUMSQ, centered, axes, rank, keep, var_out, 1.0 / (count - correction))
    if root:
        unary(ctx, "sqrt", var_out, outs[0].name)
    if len(outs) > 1 and not keep:
        ctx.emit("Reshape", "reshape", [mean], [outs[1].name], dims_params(ctx.shape(outs[1]) or [1]))


lowers("torch.var", "Tensor.var", "torch.var_mean")(lambda ctx, op: _moments(ctx, op, root=False))
lowers("torch.std", "Tensor.std", "torch.std_mean")(lambda ctx, op: _moments(ctx, op, root=True))


# --- power-average pooling -------------------------------------------------------------------------
def _check_layout(ctx: Context, op, n: int) -> None:
    """Pooling reads a (C, spatial) blob: a batch-1 input with its batch dropped, or an
    unbatched (C, spatial) input kept whole in a batchless graph."""
    rank = ctx.rank(op.inputs[0])
    if rank == n + 2:  # only a batchless graph keeps a batch axis
        raise CannotLower(f"needs a batch axis, but input {op.inputs[0].name} has "
                          f"{ctx.torch_shape(op.inputs[0])[0]} along dim 0: ncnn blobs have no batch axis, "
                          "export with dim 0 of size 1")
    if rank != n + 1:
        raise CannotLower(f"input is not (batch,) channels + {n} spatial dims")


def _window_params(op, n: int) -> tuple[dict[int, int], int]:
    """Pooling kernel/stride/pad-mode params and the kernel area."""
    kernel = as_list(param(op, "kernel_size"), n)
    stride = param(op, "stride")
    stride = kernel if stride is None or stride == [] else as_list(stride, n)
    params = {5: 0 if param(op, "ceil_mode", False) else 1}
    for i in range(n):
        params[KERNEL[i]], params[STRIDE[i]] = int(kernel[-1 - i]), int(stride[-1 - i])
    return params, math.prod(int(k) for k in kernel)


def _lp_pool(ctx: Context, op, n: int) -> None:
    """torch: (avg_pool(x ** p) * kernel_area) ** (1/p), the average over the in-bounds part
    of a ceil-mode window (count_include_pad off); p = inf is max_pool(|x|)."""
    _check_layout(ctx, op, n)
    p = float(param(op, "norm_type"))
    window, area = _window_params(op, n)
    x, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    if p == math.inf:
        ctx.emit(LAYER[n], "lppool", [unary(ctx, "abs", x, ctx.temp(out))], [out], {0: MAX, **window})
        return
    if not p > 0:
        raise CannotLower(f"lp pooling with norm_type={p} is not lowered (only p > 0 or inf)")
    average = ctx.temp(out)
    ctx.emit(LAYER[n], "lppool", [_power(ctx, x, p, out)], [average], {0: AVG, 6: 0, **window})
    scaled = scalar(ctx, "mul", average, area, out if p == 1 else ctx.temp(out))
    if p != 1:
        _root(ctx, scaled, p, out)


def _register_lp_pool(n: int) -> None:
    lowers(f"F.lp_pool{n}d", f"nn.LPPool{n}d")(lambda ctx, op: _lp_pool(ctx, op, n))


for _n in (1, 2, 3):
    _register_lp_pool(_n)


# --- similarity and distance -------------------------------------------------------------------
def _vector_norm(ctx: Context, src: str, p: float, axis: int, rank: int, keep: bool, out: str) -> None:
    """||src||_p along one ncnn axis."""
    if p in (1, 2):
        reduction(ctx, REDUCE_L1 if p == 1 else REDUCE_L2, src, [axis], rank, keep, out)
        return
    if not p > 0:
        raise CannotLower(f"p={p} norm is not lowered (only p > 0 or inf)")
    magnitude = unary(ctx, "abs", src, ctx.temp(out))
    if p == math.inf:
        reduction(ctx, REDUCE_MAX, magnitude, [axis], rank, keep, out)
        return
    total = reduction(ctx, REDUCE_SUM, _power(ctx, magnitude, p, out), [axis], rank, keep, ctx.temp(out))
    _root(ctx, total, p, out)


@lowers("F.pairwise_distance", "nn.PairwiseDistance")
def pairwise_distance(ctx: Context, op) -> None:
    """torch: ||x1 - x2 + eps||_p over the last dim."""
    out = op.outputs[0].name
    difference = ctx.temp(out)
    _lower_expression(ctx, op, "add(sub(@0,@1),@2)", ("x1", "x2", "eps"), difference)
    rank = max(ctx.rank(operand) for operand in op.inputs[:2])
    _vector_norm(ctx, difference, float(param(op, "p", 2.0)), rank - 1, rank,
                 bool(param(op, "keepdim", False)), out)


@lowers("F.cosine_similarity", "nn.CosineSimilarity")
def cosine_similarity(ctx: Context, op) -> None:
    """torch (2.x): sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim, the norms
    taken over the broadcast inputs."""
    x1, x2 = _tensor_inputs(op, ("x1", "x2"))
    shapes = [ctx.torch_shape(x1), ctx.torch_shape(x2)]
    if len(shapes[0]) != len(shapes[1]) or ctx.rank(x1) != ctx.rank(x2):
        raise CannotLower("cosine_similarity of inputs of different rank is not lowered")
    if min(shapes[0] + shapes[1]) < 1:
        raise CannotLower("cosine_similarity of inputs with a dynamic or empty dim is not lowered")
    dim, eps = int(param(op, "dim", 1)), float(param(op, "eps", 1e-8))
    axis, rank, out = ctx.axis(x1, dim), ctx.rank(x1), op.outputs[0].name
    product = ctx.temp(out)
    _lower_expression(ctx, op, "mul(@0,@1)", ("x1", "x2"), product)
    dot = reduction(ctx, REDUCE_SUM, product, [axis], rank, False, ctx.temp(out))
    size = max(shapes[0][dim], shapes[1][dim])
    norms = []
    for operand, shape in zip((x1, x2), shapes):
        # an input broadcast along dim repeats its values: its norm grows by sqrt(size)
        norm = reduction(ctx, REDUCE_L2, ctx.blob(operand), [axis], rank, False, ctx.temp(out),
                          math.sqrt(size / shape[dim]))
        norms.append(scalar(ctx, "max", norm, eps, ctx.temp(out)))
    binary(ctx, "div", dot, binary(ctx, "mul", *norms, ctx.temp(out)), out)
