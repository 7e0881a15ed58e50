"""Repetition: expand/expand_as/broadcast_to -> Expand, meshgrid -> Reshape + Expand per input,
repeat/tile -> Tile,
repeat_interleave -> a new axis expanded to the count, then merged back (Reshape)."""
from __future__ import annotations

import numpy as np

from .... import expression as ex
from ....errors import Unsupported
from ...shape_lists import shape_items
from ..expressions import shape_tensor
from ..builder import int_list, static
from ..registry import LOWERINGS


@LOWERINGS.register("Tensor.expand_as")
def expand_as(ctx, op):
    out = ctx.shape(op.outputs[0])
    target = ctx.const(out, hint="shape") if min(out) >= 0 else ctx.node("Shape", [ctx.x(op, 1)])
    ctx.node("Expand", [ctx.x(op), target], ctx.y(op))


@LOWERINGS.register("Tensor.expand", "torch.broadcast_to")
def expand(ctx, op):
    """Expand broadcasts: a size 1 keeps the input's. A target list that follows the input is
    computed at run time (its -1 items, torch's "keep", as 1)."""
    out = ctx.shape(op.outputs[0])
    if all(d >= 0 for d in out):
        target = ctx.const(out, hint="shape")
    elif len(op.inputs) > 1:
        target = _sizes_tensor(ctx, op.inputs[1])
    else:
        sizes = int_list(op.params.get("sizes", op.params.get("size")))
        if not sizes:
            raise Unsupported("expand target of unknown size")
        target = ctx.const([1 if d == -1 else d for d in sizes], hint="shape")
    ctx.node("Expand", [ctx.x(op), target], ctx.y(op))


def _sizes_tensor(ctx, sizes):
    computed = shape_items(sizes)
    if computed is None:
        raise Unsupported(f"expand target {sizes.name} is no list of sizes")
    items, operands = computed
    keep = ex.literal(1)
    return shape_tensor(ctx, [keep if _is_keep(item) else item for item in items], operands)


def _is_keep(item) -> bool:
    return isinstance(item, ex.Literal) and item.value == -1


@LOWERINGS.register("torch.meshgrid")
def meshgrid(ctx, op):
    """Input j laid along its axis of the grid (axes 0 and 1 swapped for indexing="xy"),
    then expanded over the others."""
    grid = ctx.shape(op.outputs[0])
    xy = op.params.get("indexing", "ij") == "xy" and len(grid) >= 2
    for j in range(len(op.inputs)):
        axis = {0: 1, 1: 0}.get(j, j) if xy else j
        line = [1] * len(grid)
        line[axis] = grid[axis]
        column = ctx.node("Reshape", [ctx.x(op, j), ctx.const(line, hint="shape")])
        ctx.node("Expand", [column, ctx.const(grid, hint="shape")], ctx.y(op, j))


@LOWERINGS.register("Tensor.repeat", "torch.tile", "Tensor.tile")
def repeat(ctx, op):
    reps = int_list(op.params.get("sizes", op.params.get("dims", op.params.get("repeats"))))
    shape = ctx.shape(op.inputs[0])
    src = ctx.x(op)
    if len(reps) > len(shape):  # torch prepends size-1 dimensions first
        src = ctx.node("Unsqueeze", [src, ctx.const(list(range(len(reps) - len(shape))), hint="axes")])
    elif len(reps) < len(shape):  # torch.tile pads the repeats instead
        reps = [1] * (len(shape) - len(reps)) + reps
    ctx.node("Tile", [src, ctx.const(reps, hint="repeats")], ctx.y(op))


@LOWERINGS.register("torch.repeat_interleave", "Tensor.repeat_interleave")
def repeat_interleave(ctx, op):
    repeats = op.params.get("repeats")
    if not isinstance(repeats, int) or len(op.inputs) > 1:
        raise Unsupported("repeats must be a constant integer")
    shape = static(ctx.shape(op.inputs[0]), "input shape")
    x, dim = ctx.x(op), op.params.get("dim")
    if dim is None:
        x = ctx.node("Reshape", [x, ctx.const([-1], hint="shape")])
        shape, dim = [int(np.prod(shape))], 0
    dim = dim % len(shape)
    grown = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    spread = ctx.node("Expand", [ctx.node("Unsqueeze", [x, ctx.const([dim + 1])]),
                               ctx.const(grown, hint="shape")])
    ctx.node("Reshape", [spread, ctx.const(static(ctx.shape(op.outputs[0]), "output"), hint="shape")],
           ctx.y(op))
