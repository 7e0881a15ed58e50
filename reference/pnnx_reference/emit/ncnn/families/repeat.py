"""Repetition: repeat/tile/expand -> Tile; meshgrid -> Reshape + Tile per input;
repeat_interleave -> Reshape + Tile + Reshape (one count) or Crops + Concat (per-element counts)."""
from __future__ import annotations

import numpy as np

from ....errors import AlongBatch, Unsupported
from ..context import Context, dims_params, param
from ..crops import select_indices
from ..registry import LEADING, LOWERINGS, MOVES_DATA
from ..shape_expr import with_outer_ones


@LOWERINGS.register("Tensor.repeat", "torch.tile", "Tensor.tile", batch=LEADING, **MOVES_DATA)
def repeat(ctx: Context, op) -> None:
    """Tile; the repeat counts come from the shapes: torch lines the input up with the output's
    trailing dims (leading 1s for new dims), in ncnn shapes as well as in torch's."""
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if -1 in in_shape or -1 in out_shape:
        raise Unsupported("dynamic shapes are not lowered (tile needs static sizes)")
    if len(out_shape) > 4:
        raise Unsupported(f"tile to a rank-{len(out_shape)} blob (ncnn blobs have at most 4 dims)")
    if 0 in in_shape:
        raise Unsupported("tile of an empty tensor: ncnn blobs cannot be empty")
    tile_to(ctx, "repeat", src, out, in_shape, out_shape, lambda i, o: o // i)


def tile_to(ctx: Context, kind: str, src, out, in_shape: list, out_shape: list, repeat) -> None:
    """`src` tiled to `out_shape`, `repeat(in_dim, out_dim)` times per dim; missing leading dims
    are added as 1s first (a Reshape); equal shapes are a no-op."""
    if in_shape == out_shape:
        ctx.alias(out, src)
        return
    blob = ctx.blob(src)
    if len(in_shape) < len(out_shape):
        blob = with_outer_ones(ctx, blob, in_shape, len(out_shape), out.name)
        in_shape = [1] * (len(out_shape) - len(in_shape)) + in_shape
    ctx.emit("Tile", kind, [blob], [out.name], {2: [repeat(i, o) for i, o in zip(in_shape, out_shape)]})


@LOWERINGS.register("Tensor.expand", "Tensor.expand_as", batch=LEADING, **MOVES_DATA)
def expand(ctx: Context, op) -> None:
    """Tile of the size-1 dims; new leading dims are added as 1s first (a Reshape). A dim that
    follows the input (`?` in and out) is kept: it differs between inputshape and inputshape2,
    so it is no size 1 that torch.expand could widen (the target list is then no layer)."""
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if len(out_shape) > 4 or len(in_shape) > len(out_shape):
        raise Unsupported(f"expand of {tuple(in_shape)} to {tuple(out_shape)} is not lowered")
    padded = [1] * (len(out_shape) - len(in_shape)) + in_shape
    if any((i < 0 or o < 0) and i != o for i, o in zip(padded, out_shape)):
        raise Unsupported(f"expand of {tuple(in_shape)} to {tuple(out_shape)}: a size 1 widened to a size "
                          "that follows the input is not lowered (ncnn's Tile repeats are constants)")
    tile_to(ctx, "expand", src, out, in_shape, out_shape, lambda i, o: o if i == 1 else 1)


@LOWERINGS.register("torch.meshgrid", batch=LEADING, **MOVES_DATA)
def meshgrid(ctx: Context, op) -> None:
    """Input j (0-d or 1-d) laid along its axis of the grid (axes 0 and 1 swapped for
    indexing="xy"), then tiled over the others."""
    grid = ctx.torch_shape(op.outputs[0])
    if any(ctx.batch_axis(x) is not None for x in (*op.inputs, *op.outputs)):
        raise AlongBatch("meshgrid's grid has no batch axis")
    if len(grid) > 4:
        raise Unsupported(f"a rank-{len(grid)} grid (ncnn blobs have at most 4 dims)")
    xy = param(op, "indexing", "ij") == "xy" and len(grid) >= 2
    for j, (x, y) in enumerate(zip(op.inputs, op.outputs)):
        axis = {0: 1, 1: 0}.get(j, j) if xy else j
        line = [1] * len(grid)
        line[axis] = grid[axis]
        blob = ctx.reshaped(ctx.blob(x), line, y.name) if len(grid) > 1 else ctx.blob(x)
        ctx.emit("Tile", "meshgrid", [blob], [y.name], {2: [g // n for n, g in zip(line, grid)]})


def _repeat_counts(ctx: Context, op) -> np.ndarray:
    """repeat_interleave's repeats: an int parameter or a constant tensor."""
    if "repeats" in op.params:
        return np.asarray(param(op, "repeats")).reshape(-1)
    operand = op.input("repeats", 1)
    counts = None if operand is None else ctx.constant(operand)
    if counts is None:
        raise Unsupported("repeat_interleave with repeats computed at run time is not lowered")
    return counts.reshape(-1)


@LOWERINGS.register("torch.repeat_interleave", "Tensor.repeat_interleave", batch=LEADING)
def repeat_interleave(ctx: Context, op) -> None:
    """Each element along dim r times: for one count r, a new axis of 1 after dim is tiled r times
    and merged back; for per-element counts, Crops of the repeated indices and a Concat. Without
    dim the input is flattened first."""
    src, out = op.inputs[0], op.outputs[0]
    counts = _repeat_counts(ctx, op).astype(np.int64)
    blob, shape, dim = ctx.blob(src), ctx.shape(src), param(op, "dim")
    if dim is None:
        if len(shape) > 1:
            flat, shape = ctx.temp(out.name), [int(np.prod(shape))]
            ctx.emit("Flatten", "flatten", [blob], [flat])
            blob = flat
        axis = 0
    else:
        axis = ctx.axis(src, int(dim))
    if counts.size == 1 and counts[0] < 1:
        raise Unsupported("repeat_interleave with repeats < 1 gives an empty tensor: ncnn blobs cannot be empty")
    if counts.size == 1 and len(shape) < 4:
        _tile_each(ctx, blob, shape, axis, int(counts[0]), out)
        return
    counts = np.broadcast_to(counts, (shape[axis],))
    select_indices(ctx, blob, axis, np.repeat(np.arange(shape[axis]), counts), out.name)


def _tile_each(ctx: Context, blob: str, shape: list[int], axis: int, count: int, out) -> None:
    spread = [*shape[:axis + 1], 1, *shape[axis + 1:]]
    reps = [1] * len(spread)
    reps[axis + 1] = count
    viewed, tiled = ctx.temp(out.name), ctx.temp(out.name)
    ctx.emit("Reshape", "repeat_interleave", [blob], [viewed], dims_params(spread))
    ctx.emit("Tile", "repeat_interleave", [viewed], [tiled], {2: reps})
    merged = [*shape[:axis], shape[axis] * count, *shape[axis + 1:]]
    if len(merged) == 1:
        ctx.emit("Flatten", "flatten", [tiled], [out.name])
    else:
        ctx.emit("Reshape", "repeat_interleave", [tiled], [out.name], dims_params(merged))
