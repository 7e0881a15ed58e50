"""index_select/gather by a constant index -> Crops + Concat (ncnn has no Gather layer)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..context import Context, dims_params, single_dim
from ..crops import crop, select_indices
from ..lookup import lookup_by_value
from ..registry import LEADING, LOWERINGS


def _constant_index(ctx: Context, op, what: str):
    """(input operand, index values) of an indexing operator whose index is a constant."""
    src, index = op.input("input", 0), op.input("index", 1)
    values = None if index is None else ctx.constant(index)
    if values is None:
        raise Unsupported(f"{what} with an index computed at run time is not lowered (ncnn has no Gather layer)")
    return src, values


@LOWERINGS.register("torch.index_select", "Tensor.index_select", batch=LEADING)
def index_select(ctx: Context, op) -> None:
    src, values = _constant_index(ctx, op, "index_select")
    dim = single_dim(op)
    size = ctx.torch_shape(src)[dim]
    indices = [int(i) + size if i < 0 else int(i) for i in values.reshape(-1)]
    select_indices(ctx, ctx.blob(src), ctx.axis(src, dim), indices, op.outputs[0].name)


@LOWERINGS.register("torch.gather", "Tensor.gather", batch=LEADING, int_operands=True)
def gather(ctx: Context, op) -> None:
    """A constant index that picks the same entries along dim at every other position is an
    index_select of the input cut to the index's extent; a constant input that is one line
    along dim (BERT's token type buffer gathered at the positions) is a table its computed
    index looks its entries up in; any other gather needs a Gather layer."""
    if _gather_from_a_constant_line(ctx, op):
        return
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


def _gather_from_a_constant_line(ctx: Context, op) -> bool:
    src, index = op.input("input", 0), op.input("index", 1)
    table = None if src is None else ctx.constant(src)
    if table is None or index is None or ctx.constant(index) is not None:
        return False
    dim = single_dim(op) % table.ndim
    if any(n != 1 for d, n in enumerate(table.shape) if d != dim):
        return False
    out = op.outputs[0]
    looked_up = ctx.temp(out.name)
    lookup_by_value(ctx, index, table.reshape(-1, 1).astype(np.float32), looked_up)
    ctx.emit("Reshape", "reshape", [looked_up], [out.name], dims_params(ctx.shape(out)))
    return True
