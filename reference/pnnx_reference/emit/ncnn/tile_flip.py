"""repeat/tile/expand -> Tile, repeat_interleave -> Reshape + Tile + Reshape, Tensor.copy_ -> its
source (Reshape + Tile when it broadcasts), flip -> Flip, cumsum -> CumulativeSum, roll -> Slice + Concat."""
from __future__ import annotations

import numpy as np

from .concat_slice import select_indices
from .context import CannotLower, Context, dims_params, param
from .registry import lowers


@lowers("Tensor.repeat", "torch.tile", "Tensor.tile")
def repeat(ctx: Context, op) -> None:
    """Tile; the repeat counts come from the shapes: torch lines the input up with the output's
    trailing dims (leading 1s for new dims), in ncnn shapes as well as in torch's."""
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if -1 in in_shape or -1 in out_shape:
        raise CannotLower("dynamic shapes are not lowered (tile needs static sizes)")
    if len(out_shape) > 4:
        raise CannotLower(f"tile to a rank-{len(out_shape)} blob (ncnn blobs have at most 4 dims)")
    if 0 in in_shape:
        raise CannotLower("tile of an empty tensor: ncnn blobs cannot be empty")
    if in_shape == out_shape:
        ctx.alias(out, src)
        return
    blob = ctx.blob(src)
    if len(in_shape) < len(out_shape):
        in_shape = [1] * (len(out_shape) - len(in_shape)) + in_shape
        padded = ctx.temp(out.name)
        ctx.emit("Reshape", "repeat", [blob], [padded], dims_params(in_shape))
        blob = padded
    ctx.emit("Tile", "repeat", [blob], [out.name], {2: [o // i for i, o in zip(in_shape, out_shape)]})


@lowers("Tensor.expand", "Tensor.expand_as")
def expand(ctx: Context, op) -> None:
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if len(in_shape) != len(out_shape):
        raise CannotLower("expand that adds leading dims is not lowered")
    if in_shape == out_shape:
        ctx.alias(out, src)
        return
    repeats = [o // i if i == 1 else 1 for i, o in zip(in_shape, out_shape)]
    ctx.emit("Tile", "expand", [ctx.blob(src)], [out.name], {2: repeats})


@lowers("Tensor.copy")
def copy_(ctx: Context, op) -> None:
    """y.copy_(src) is src broadcast to y's shape (y's values are all overwritten)."""
    names = op.inputnames or ["input", "src"]
    dst, src = op.inputs[names.index("input")], op.inputs[names.index("src")]
    out = op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(dst)
    if in_shape == out_shape:
        ctx.alias(out, src)
        return
    if len(in_shape) > len(out_shape):
        raise CannotLower(f"copy_ of a {tuple(ctx.torch_shape(src))} source into "
                          f"{tuple(ctx.torch_shape(dst))} is not lowered")
    padded = [1] * (len(out_shape) - len(in_shape)) + in_shape
    if any(i not in (1, o) for i, o in zip(padded, out_shape)):
        raise CannotLower(f"copy_ source {tuple(ctx.torch_shape(src))} does not broadcast to "
                          f"{tuple(ctx.torch_shape(dst))}")
    blob = ctx.blob(src)
    if len(padded) != len(in_shape):
        blob, reshaped = ctx.temp(out.name), blob
        ctx.emit("Reshape", "copy", [reshaped], [blob], dims_params(padded))
    repeats = [o // i for i, o in zip(padded, out_shape)]
    ctx.emit("Tile", "copy", [blob], [out.name], {2: repeats})


@lowers("torch.flip", "Tensor.flip")
def flip(ctx: Context, op) -> None:
    dims = param(op, "dims")
    dims = [dims] if isinstance(dims, int) else list(dims)
    axes = sorted(ctx.axis(op.inputs[0], int(d)) for d in dims)
    ctx.emit("Flip", "flip", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: axes})


@lowers("torch.cumsum", "Tensor.cumsum")
def cumsum(ctx: Context, op) -> None:
    axis = ctx.axis(op.inputs[0], int(param(op, "dim")))
    ctx.emit("CumulativeSum", "cumsum", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: axis})


@lowers("torch.roll", "Tensor.roll")
def roll(ctx: Context, op) -> None:
    shifts, dims = param(op, "shifts"), param(op, "dims")
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    if len(dims) != len(shifts) or not dims:
        raise CannotLower("roll over the flattened tensor is not lowered")
    src = op.inputs[0]
    shape = ctx.shape(src)
    blob = ctx.blob(src)
    for i, (shift, dim) in enumerate(zip(shifts, dims)):
        axis = ctx.axis(src, int(dim))
        n = shape[axis]
        k = shift % n
        last = i == len(dims) - 1
        target = op.outputs[0].name if last else ctx.temp(op.outputs[0].name)
        if k == 0:
            ctx.emit("Noop", "roll", [blob], [target])
        else:
            head, tail = ctx.temp(target), ctx.temp(target)
            ctx.emit("Slice", "roll", [blob], [head, tail], {0: [n - k, k], 1: axis})
            ctx.emit("Concat", "roll", [tail, head], [target], {0: axis})
        blob = target


def _repeat_counts(ctx: Context, op) -> np.ndarray:
    """repeat_interleave's repeats: an int parameter or a constant tensor."""
    if "repeats" in op.params:
        return np.asarray(param(op, "repeats")).reshape(-1)
    names = op.inputnames or ["input", "repeats"]
    counts = ctx.constant(op.inputs[names.index("repeats")]) if "repeats" in names else None
    if counts is None:
        raise CannotLower("repeat_interleave with repeats computed at run time is not lowered")
    return counts.reshape(-1)


@lowers("torch.repeat_interleave", "Tensor.repeat_interleave")
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
        raise CannotLower("repeat_interleave with repeats < 1 gives an empty tensor: ncnn blobs cannot be empty")
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
