"""Pooling (1-D, 2-D, 3-D): max/avg, adaptive and global; power-average (LPPool) as
(avg_pool(x ** p) * kernel_area) ** (1/p) around a Pooling layer."""
from __future__ import annotations

import math

from ....errors import Unsupported
from ..arithmetic import power, root, scalar, unary
from ..context import Context, as_list, dims_params, param
from ..registry import FIRST, LOWERINGS

KERNEL, STRIDE, PAD = (1, 11, 21), (2, 12, 22), (3, 13, 23)

OUT_SIZE = (8, 18, 28)

LAYER = {1: "Pooling1D", 2: "Pooling", 3: "Pooling3D"}

MAX, AVG = 0, 1


def _check_rank(ctx: Context, op, n: int) -> None:
    if ctx.rank(op.inputs[0]) != n + 1:
        raise Unsupported(f"input is not (batch,) channels + {n} spatial dims")


def _check_single_output(op) -> None:
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise Unsupported("pooling indices (return_indices=True) are used: ncnn has none")


def _pool(ctx: Context, op, n: int, kind: int) -> None:
    _check_rank(ctx, op, n)
    _check_single_output(op)
    if any(d != 1 for d in as_list(param(op, "dilation", 1), n)):
        raise Unsupported("dilated pooling has no ncnn equivalent")
    if param(op, "divisor_override") is not None:
        raise Unsupported("divisor_override has no ncnn equivalent")
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
                raise Unsupported("ceil_mode average pooling with padding counted in the divisor "
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
    layout = {"batch": FIRST, "unbatched_rank": n + 1}
    LOWERINGS.register(f"nn.MaxPool{d}", f"F.max_pool{d}", **layout)(lambda ctx, op: _pool(ctx, op, n, MAX))
    LOWERINGS.register(f"nn.AvgPool{d}", f"F.avg_pool{d}", **layout)(lambda ctx, op: _pool(ctx, op, n, AVG))
    LOWERINGS.register(f"nn.AdaptiveMaxPool{d}", f"F.adaptive_max_pool{d}", **layout)(
        lambda ctx, op: _adaptive(ctx, op, n, MAX))
    LOWERINGS.register(f"nn.AdaptiveAvgPool{d}", f"F.adaptive_avg_pool{d}", **layout)(
        lambda ctx, op: _adaptive(ctx, op, n, AVG))


for _n in (1, 2, 3):
    _register(_n)


# --- power-average pooling (LPPool) --------------------------------------------------------------
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
    _check_rank(ctx, op, n)
    p = float(param(op, "norm_type"))
    window, area = _window_params(op, n)
    x, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    if p == math.inf:
        ctx.emit(LAYER[n], "lppool", [unary(ctx, "abs", x, ctx.temp(out))], [out], {0: MAX, **window})
        return
    if not p > 0:
        raise Unsupported(f"lp pooling with norm_type={p} is not lowered (only p > 0 or inf)")
    average = ctx.temp(out)
    ctx.emit(LAYER[n], "lppool", [power(ctx, x, p, out)], [average], {0: AVG, 6: 0, **window})
    scaled = scalar(ctx, "mul", average, area, out if p == 1 else ctx.temp(out))
    if p != 1:
        root(ctx, scaled, p, out)


def _register_lp_pool(n: int) -> None:
    LOWERINGS.register(f"F.lp_pool{n}d", f"nn.LPPool{n}d", batch=FIRST, unbatched_rank=n + 1)(
        lambda ctx, op: _lp_pool(ctx, op, n))


for _n in (1, 2, 3):
    _register_lp_pool(_n)
