"""Repetition: expand/expand_as/broadcast_to -> Expand, meshgrid -> Reshape + Expand per input,
repeat/tile -> Tile,
repeat_interleave -> a new axis expanded to the count, then merged back (Reshape)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import int_list, static
from ..registry import LOWERINGS


@LOWERINGS.register("Tensor.expand_as")
def expand_as(b, op):
    out = b.shape(op.outputs[0])
    target = b.const(out, hint="shape") if min(out) >= 0 else b.node("Shape", [b.x(op, 1)])
    b.node("Expand", [b.x(op), target], b.y(op))


@LOWERINGS.register("Tensor.expand", "torch.broadcast_to")
def expand(b, op):
    out = b.shape(op.outputs[0])
    if any(d < 0 for d in out):
        sizes = int_list(op.params.get("sizes", op.params.get("size")))
        if not sizes or len(op.inputs) > 1:
            raise Unsupported("dynamic expand target")
        out = [1 if d == -1 else d for d in sizes]  # Expand broadcasts: 1 keeps the input size
    b.node("Expand", [b.x(op), b.const(out, hint="shape")], b.y(op))


@LOWERINGS.register("torch.meshgrid")
def meshgrid(b, op):
    """Input j laid along its axis of the grid (axes 0 and 1 swapped for indexing="xy"),
    then expanded over the others."""
    grid = b.shape(op.outputs[0])
    xy = op.params.get("indexing", "ij") == "xy" and len(grid) >= 2
    for j in range(len(op.inputs)):
        axis = {0: 1, 1: 0}.get(j, j) if xy else j
        line = [1] * len(grid)
        line[axis] = grid[axis]
        column = b.node("Reshape", [b.x(op, j), b.const(line, hint="shape")])
        b.node("Expand", [column, b.const(grid, hint="shape")], b.y(op, j))


@LOWERINGS.register("Tensor.repeat", "torch.tile", "Tensor.tile")
def repeat(b, op):
    reps = int_list(op.params.get("sizes", op.params.get("dims", op.params.get("repeats"))))
    shape = b.shape(op.inputs[0])
    src = b.x(op)
    if len(reps) > len(shape):  # torch prepends size-1 dimensions first
        src = b.node("Unsqueeze", [src, b.const(list(range(len(reps) - len(shape))), hint="axes")])
    elif len(reps) < len(shape):  # torch.tile pads the repeats instead
        reps = [1] * (len(shape) - len(reps)) + reps
    b.node("Tile", [src, b.const(reps, hint="repeats")], b.y(op))


@LOWERINGS.register("torch.repeat_interleave", "Tensor.repeat_interleave")
def repeat_interleave(b, op):
    repeats = op.params.get("repeats")
    if not isinstance(repeats, int) or len(op.inputs) > 1:
        raise Unsupported("repeats must be a constant integer")
    shape = static(b.shape(op.inputs[0]), "input shape")
    x, dim = b.x(op), op.params.get("dim")
    if dim is None:
        x = b.node("Reshape", [x, b.const([-1], hint="shape")])
        shape, dim = [int(np.prod(shape))], 0
    dim = dim % len(shape)
    grown = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    spread = b.node("Expand", [b.node("Unsqueeze", [x, b.const([dim + 1])]),
                               b.const(grown, hint="shape")])
    b.node("Reshape", [spread, b.const(static(b.shape(op.outputs[0]), "output"), hint="shape")],
           b.y(op))
