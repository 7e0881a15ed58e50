"""Max/avg pooling (1-D, 2-D, 3-D), adaptive and global pooling."""
from __future__ import annotations

from .context import CannotLower, Context, as_list, dims_params, param
from .registry import lowers

KERNEL, STRIDE, PAD = (1, 11, 21), (2, 12, 22), (3, 13, 23)
OUT_SIZE = (8, 18, 28)
LAYER = {1: "Pooling1D", 2: "Pooling", 3: "Pooling3D"}
MAX, AVG = 0, 1


def _check_rank(ctx: Context, op, n: int) -> None:
    if ctx.rank(op.inputs[0]) != n + 1:
        raise CannotLower(f"input is not batch + channels + {n} spatial dims (unbatched pooling input)")


def _check_single_output(op) -> None:
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise CannotLower("pooling indices (return_indices=True) are used: ncnn has none")


def _pool(ctx: Context, op, n: int, kind: int) -> None:
    _check_rank(ctx, op, n)
    _check_single_output(op)
    if any(d != 1 for d in as_list(param(op, "dilation", 1), n)):
        raise CannotLower("dilated pooling has no ncnn equivalent")
    if param(op, "divisor_override") is not None:
        raise CannotLower("divisor_override has no ncnn equivalent")
    kernel = as_list(param(op, "kernel_size"), n)
    stride = param(op, "stride")
    stride = kernel if stride is None or stride == [] else as_list(stride, n)
    pad = as_list(param(op, "padding", 0), n)
    p = {0: kind}
    for i in range(n):
        p[KERNEL[i]], p[STRIDE[i]], p[PAD[i]] = int(kernel[-1 - i]), int(stride[-1 - i]), int(pad[-1 - i])
    ceil = bool(param(op, "ceil_mode", False))
    p[5] = 0 if ceil else 1
    if kind == AVG:
        p[6] = int(bool(param(op, "count_include_pad", True)))
        if ceil and p[6] and _ceil_extends(ctx.shape(op.inputs[0])[1:], kernel, stride, pad):
            # torch leaves the ceil-mode extension out of the divisor, ncnn counts it with the padding
            if any(pad):
                raise CannotLower("ceil_mode average pooling with padding counted in the divisor "
                                  "has no ncnn equivalent")
            p[6] = 0  # no padding: counting only real elements is what torch does
    ctx.emit(LAYER[n], "maxpool" if kind == MAX else "avgpool",
             [ctx.blob(op.inputs[0])], [op.outputs[0].name], p)


def _ceil_extends(spatial, kernel, stride, pad) -> bool:
    """Whether ceil mode adds a partial window past the padded input on some dim."""
    return any((size + 2 * p - k) % s for size, k, s, p in zip(spatial, kernel, stride, pad))


def _adaptive(ctx: Context, op, n: int, kind: int) -> None:
    _check_rank(ctx, op, n)
    _check_single_output(op)
    in_shape = ctx.shape(op.inputs[0])[1:]
    size = as_list(param(op, "output_size"), n)
    # None (kept size) is written 0 in the graph, as upstream writes it
    size = [in_shape[i] if s in (None, 0) else int(s) for i, s in enumerate(size)]
    src = ctx.blob(op.inputs[0])
    out = op.outputs[0]
    if all(s == 1 for s in size):
        _global(ctx, op, n, kind, src)
        return
    p = {0: kind, 7: 1}
    for i in range(n):
        p[OUT_SIZE[i]] = size[-1 - i]
    ctx.emit(LAYER[n], "adaptivepool", [src], [out.name], p)


def _global(ctx: Context, op, n: int, kind: int, src: str) -> None:
    """Global pooling yields a 1-d (c) blob: reshape back to (c,1,..) and remember the flat
    blob so a following flatten/reshape to (c) reads it directly."""
    flat = ctx.temp(op.outputs[0].name)
    ctx.emit(LAYER[n], "gap" if kind == AVG else "gmp", [src], [flat], {0: kind, 4: 1})
    shape = ctx.shape(op.outputs[0])
    ctx.emit("Reshape", "reshape", [flat], [op.outputs[0].name], dims_params(shape))
    ctx.flat_views[op.outputs[0].name] = flat


def _register(n: int) -> None:
    d = f"{n}d"
    lowers(f"nn.MaxPool{d}", f"F.max_pool{d}")(lambda ctx, op: _pool(ctx, op, n, MAX))
    lowers(f"nn.AvgPool{d}", f"F.avg_pool{d}")(lambda ctx, op: _pool(ctx, op, n, AVG))
    lowers(f"nn.AdaptiveMaxPool{d}", f"F.adaptive_max_pool{d}")(lambda ctx, op: _adaptive(ctx, op, n, MAX))
    lowers(f"nn.AdaptiveAvgPool{d}", f"F.adaptive_avg_pool{d}")(lambda ctx, op: _adaptive(ctx, op, n, AVG))


for _n in (1, 2, 3):
    _register(_n)
