"""index_select/gather by a constant index -> Crops + Concat (ncnn has no Gather layer)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..context import Context, single_dim
from ..crops import crop, select_indices
from ..registry import LOWERINGS


def _constant_index(ctx: Context, op, what: str):
    """(input operand, index values) of an indexing operator whose index is a constant."""
    src, index = op.input("input", 0), op.input("index", 1)
    values = None if index is None else ctx.constant(index)
    if values is None:
        raise Unsupported(f"{what} with an index computed at run time is not lowered (ncnn has no Gather layer)")
    return src, values


@LOWERINGS.register("torch.index_select", "Tensor.index_select", batchless=True)
def index_select(ctx: Context, op) -> None:
    src, values = _constant_index(ctx, op, "index_select")
    dim = single_dim(op)
    size = ctx.torch_shape(src)[dim]
    indices = [int(i) + size if i < 0 else int(i) for i in values.reshape(-1)]
    select_indices(ctx, ctx.blob(src), ctx.axis(src, dim), indices, op.outputs[0].name)


@LOWERINGS.register("torch.gather", "Tensor.gather", batchless=True)
def gather(ctx: Context, op) -> None:
    """A constant index that picks the same entries along dim at every other position is an
    index_select of the input cut to the index's extent; any other gather needs a Gather layer."""
    src, values = _constant_index(ctx, op, "gather")
    dim = single_dim(op)
    shape = ctx.torch_shape(src)
    dim = dim + len(shape) if dim < 0 else dim
    if values.ndim != len(shape):
        raise Unsupported(f"gather with a rank-{values.ndim} index into a rank-{len(shape)} input")
    line = values[tuple(slice(None) if d == dim else slice(0, 1) for d in range(values.ndim))]
    if not np.array_equal(np.broadcast_to(line, values.shape), values):
        raise Unsupported("gather with a constant index that differs across the other dims is not lowered "
                          "(ncnn has no Gather layer)")
    cut = [(d, 0, n, 1) for d, n in enumerate(values.shape) if d != dim and n != shape[d]]
    blob = ctx.blob(src)
    if cut:
        blob = ctx.temp(op.outputs[0].name)
        crop(ctx, op, cut, blob)
    indices = [int(i) + shape[dim] if i < 0 else int(i) for i in line.reshape(-1)]
    select_indices(ctx, blob, ctx.axis(src, dim), indices, op.outputs[0].name)
