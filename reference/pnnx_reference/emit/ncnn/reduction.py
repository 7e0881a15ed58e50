"""ncnn Reduction: its operation codes, one emitter, and the ncnn axes of a torch `dim`
argument, shared by the reductions and the formulas that reduce (variance, any/all, argmax,
norms, embedding bags)."""
from __future__ import annotations

import math

from ...errors import Unsupported
from .context import Context

# ncnn Reduction operation codes (param 0)
REDUCE_SUM, REDUCE_SUMSQ, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD = 0, 2, 3, 4, 5, 6
REDUCE_L1, REDUCE_L2, REDUCE_LOGSUMEXP = 7, 8, 10


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
        raise Unsupported("variance over a dynamic dim is not lowered")
    return axes, math.prod(sizes)
