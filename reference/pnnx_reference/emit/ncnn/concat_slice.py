"""cat/stack -> Concat; chunk/split/tensor_split/unbind -> Slice; slice/select/slice_copy/narrow -> Crop;
index_select/gather by a constant index -> Crops + Concat;
slice_scatter and Tensor.slice_copy (a write into a slice) -> CopyTo.
Sizes come from the (static) operand shapes, so every split form lowers the same way."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, dims_params, named_input, param
from .registry import lowers

INT_MAX = 2147483647


def _dim(op, default: int = 0) -> int:
    value = param(op, "dim", default)
    if isinstance(value, (list, tuple)):
        raise CannotLower("several dims at once are not lowered")
    return int(value)


@lowers("torch.cat", "torch.concat", "torch.concatenate")
def cat(ctx: Context, op) -> None:
    ref = op.outputs[0]
    axis = ctx.axis(ref, _dim(op))
    ctx.emit("Concat", "cat", [ctx.blob(x) for x in op.inputs], [ref.name], {0: axis})


@lowers("torch.stack")
def stack(ctx: Context, op) -> None:
    out = op.outputs[0]
    axis = ctx.axis(out, _dim(op))
    shape = ctx.shape(out)
    piece = shape[:axis] + [1] + shape[axis + 1:]
    if len(piece) > 4:
        raise CannotLower("stack to a rank > 4 blob")
    parts = []
    for x in op.inputs:
        t = ctx.temp(out.name)
        ctx.emit("Reshape", "reshape", [ctx.blob(x)], [t], dims_params(piece))
        parts.append(t)
    ctx.emit("Concat", "stack", parts, [out.name], {0: axis})


def _slice_along(ctx: Context, op, axis: int, squeeze: bool) -> None:
    sizes = [ctx.shape(o)[axis] if not squeeze else 1 for o in op.outputs]
    if -1 in sizes:
        raise CannotLower("dynamic split sizes are not lowered")
    if 0 in sizes:
        raise CannotLower("a split yields an empty tensor: ncnn blobs cannot be empty")
    if not squeeze:
        ctx.emit("Slice", "slice", [ctx.blob(op.inputs[0])], [o.name for o in op.outputs], {0: sizes, 1: axis})
        return
    temps = [ctx.temp(o.name) for o in op.outputs]
    ctx.emit("Slice", "unbind", [ctx.blob(op.inputs[0])], temps, {0: sizes, 1: axis})
    for t, o in zip(temps, op.outputs):
        shape = ctx.shape(o)
        if not shape:
            raise CannotLower("unbind to 0-d tensors")
        ctx.emit("Reshape", "reshape", [t], [o.name], dims_params(shape))


@lowers("torch.chunk", "Tensor.chunk", "torch.split", "Tensor.split", "torch.tensor_split",
        "Tensor.tensor_split")
def split(ctx: Context, op) -> None:
    _slice_along(ctx, op, ctx.axis(op.inputs[0], _dim(op)), squeeze=False)


@lowers("torch.unbind", "Tensor.unbind")
def unbind(ctx: Context, op) -> None:
    _slice_along(ctx, op, ctx.axis(op.inputs[0], _dim(op)), squeeze=True)


def _slice_specs(op) -> tuple[list[tuple[int, int, int, int]], bool]:
    """(dim, start, end, step) per sliced dim, for both the singular and plural param forms, and
    whether some dims are selected (indexed away) rather than sliced."""
    if "dims" not in op.params:
        return [(param(op, "dim", 0), param(op, "start", 0), param(op, "end", INT_MAX), param(op, "step", 1))], False
    dims = param(op, "dims")
    selects = param(op, "selects") or [INT_MAX] * len(dims)
    specs, selected = [], False
    for dim, start, end, step, sel in zip(dims, param(op, "starts"), param(op, "ends"), param(op, "steps"), selects):
        if sel != INT_MAX:
            if not isinstance(sel, int):
                raise CannotLower("select index from a tensor is not lowered")
            start, end, step, selected = sel, (sel + 1 if sel != -1 else INT_MAX), 1, True
        specs.append((dim, start, end, step))
    return specs, selected


MAX_STRIDED = 64  # a strided slice becomes one Crop per kept index, then a Concat


def _crop(ctx: Context, op, specs, out_name: str) -> None:
    """Crop the box holding the slice; each strided dim then keeps every step-th index (ncnn
    Crop has no step): by a reshape where the box can be widened to a multiple of the step,
    else one Crop per kept index."""
    src = op.inputs[0]
    shape = ctx.torch_shape(src)
    box_shape = list(ctx.shape(src))
    starts, ends, axes, strided = [], [], [], []
    for dim, start, end, step in specs:
        if not all(isinstance(v, int) or v is None for v in (start, end, step)):
            raise CannotLower("slice bounds from tensors are not lowered")
        size = shape[int(dim)]
        start = 0 if start is None else start + size if start < 0 else min(start, size)
        end = size if end is None or end >= INT_MAX else end + size if end < 0 else min(end, size)
        axis = ctx.axis(src, int(dim))
        step = 1 if step is None else step
        if step != 1:
            start, end, offset = _strided_box(start, end, step, size, len(box_shape))
            strided.append((axis, step, offset))
        starts.append(start)
        ends.append(end)
        axes.append(axis)
        box_shape[axis] = end - start
    if not strided:
        ctx.emit("Crop", "slice", [ctx.blob(src)], [out_name], {9: starts, 10: ends, 11: axes})
        return
    box = ctx.temp(out_name)
    ctx.emit("Crop", "slice", [ctx.blob(src)], [box], {9: starts, 10: ends, 11: axes})
    for i, (axis, step, offset) in enumerate(strided):
        target = out_name if i == len(strided) - 1 else ctx.temp(out_name)
        box = _every_step(ctx, box, box_shape, axis, step, offset, target)


def _strided_box(start: int, end: int, step: int, size: int, ncnn_rank: int) -> tuple[int, int, int | None]:
    """(box start, box end, offset of the first kept index in each step-long group), the box
    widened to a whole number of steps inside [0, size); offset None: no such box, or no room
    for the extra reshape axis (ncnn blobs have at most 4 dims)."""
    count = len(range(start, end, step))
    begin = min(start, size - count * step)
    if ncnn_rank >= 4 or count == 0 or begin < 0 or start - begin >= step:
        return start, end, None
    return begin, begin + count * step, start - begin


def _every_step(ctx: Context, blob: str, shape: list[int], axis: int, step: int, offset: int | None,
                out_name: str) -> str:
    """Keep every step-th index along `axis` of `blob` (ncnn shape `shape`, updated in place)."""
    if offset is not None and min(shape) > 0:
        _every_step_by_reshape(ctx, blob, shape, axis, step, offset, out_name)
        shape[axis] //= step
        return out_name
    keep = list(range(0, shape[axis], step))
    if len(keep) > MAX_STRIDED:
        raise CannotLower(f"strided slice keeping {len(keep)} > {MAX_STRIDED} indices is not lowered "
                          "(ncnn Crop has no step)")
    if len(keep) == 1:
        ctx.emit("Crop", "slice", [blob], [out_name], {9: [0], 10: [1], 11: [axis]})
    else:
        parts = [ctx.temp(out_name) for _ in keep]
        for index, part in zip(keep, parts):
            ctx.emit("Crop", "slice", [blob], [part], {9: [index], 10: [index + 1], 11: [axis]})
        ctx.emit("Concat", "slice", parts, [out_name], {0: axis})
    shape[axis] = len(keep)
    return out_name


def _every_step_by_reshape(ctx: Context, blob: str, shape: list[int], axis: int, step: int, offset: int,
                           out_name: str) -> None:
    """Split the axis into (length/step, step), crop index `offset` of the new inner axis and
    merge back: three layers whatever the length."""
    split = shape[:axis] + [shape[axis] // step, step] + shape[axis + 1:]
    grouped, picked = ctx.temp(out_name), ctx.temp(out_name)
    ctx.emit("Reshape", "slice", [blob], [grouped], dims_params(split))
    ctx.emit("Crop", "slice", [grouped], [picked], {9: [offset], 10: [offset + 1], 11: [axis + 1]})
    ctx.emit("Reshape", "slice", [picked], [out_name], dims_params(split[:axis + 1] + split[axis + 2:]))


@lowers("Tensor.slice", "torch.slice_copy")
def slice_(ctx: Context, op) -> None:
    specs, selected = _slice_specs(op)
    if not selected:
        _crop(ctx, op, specs, op.outputs[0].name)
        return
    _crop_then_reshape(ctx, op, specs)


def _crop_then_reshape(ctx: Context, op, specs) -> None:
    out = op.outputs[0]
    shape = ctx.shape(out)
    if not shape:
        raise CannotLower("select to a 0-d tensor")
    t = ctx.temp(out.name)
    _crop(ctx, op, specs, t)
    ctx.emit("Reshape", "reshape", [t], [out.name], dims_params(shape))


@lowers("Tensor.select", "torch.select")
def select(ctx: Context, op) -> None:
    dim, index = int(param(op, "dim")), param(op, "index")
    if not isinstance(index, int):
        raise CannotLower("select index from a tensor is not lowered")
    _crop_then_reshape(ctx, op, [(dim, index, index + 1 if index != -1 else INT_MAX, 1)])


def _bound(value, size: int, default: int) -> int:
    """A slice bound clamped into [0, size], negatives counted from the end."""
    if value is None or value >= INT_MAX:
        value = default
    if not isinstance(value, int):
        raise CannotLower("slice bounds from tensors are not lowered")
    return max(0, value + size) if value < 0 else min(value, size)


def _copy_box(ctx: Context, inp, specs) -> tuple[list[int], list[int], list[int]]:
    """CopyTo starts and axes for unit-step `specs`, and the torch shape of the box they cover."""
    box, starts, axes = ctx.torch_shape(inp), [], []
    for dim, start, end, step in specs:
        if step not in (1, None):
            raise CannotLower(f"a write into a slice with step {step} is not lowered (ncnn CopyTo has no step)")
        dim = int(dim)
        size = box[dim]
        start, end = _bound(start, size, 0), _bound(end, size, size)
        box[dim] = max(end - start, 0)
        starts.append(start)
        axes.append(ctx.axis(inp, dim))
    return starts, axes, box


def _copy_to(ctx: Context, op, inp, src, specs, prefix: str) -> None:
    """CopyTo writes src into a copy of input at the box's corner; src must fill the box
    (a same-size src of another rank is reshaped to it, a broadcast one is refused)."""
    starts, axes, box = _copy_box(ctx, inp, specs)
    if 0 in box:
        raise CannotLower("a write into an empty slice: ncnn blobs cannot be empty")
    box = box[1:] if ctx.has_batch(inp) else box
    blob, have = ctx.blob(src), ctx.shape(src)
    if have != box:
        if math.prod(have) != math.prod(box):
            raise CannotLower(f"a value of shape {tuple(ctx.torch_shape(src))} broadcast into a slice of "
                              f"shape {tuple(box)} is not lowered (ncnn CopyTo copies the value as is)")
        if len(box) > 4:
            raise CannotLower("a write into a slice of a rank > 4 blob is not lowered")
        blob, reshaped = ctx.temp(op.outputs[0].name), blob
        ctx.emit("Reshape", "reshape", [reshaped], [blob], dims_params(box))
    ctx.emit("CopyTo", prefix, [ctx.blob(inp), blob], [op.outputs[0].name], {9: starts, 11: axes})


def _input_and_src(op):
    names = op.inputnames or ["input", "src"]
    return op.inputs[names.index("input")], op.inputs[names.index("src")]


@lowers("torch.slice_scatter")
def slice_scatter(ctx: Context, op) -> None:
    inp, src = _input_and_src(op)
    spec = (param(op, "dim", 0), param(op, "start", 0), param(op, "end", INT_MAX), param(op, "step", 1))
    _copy_to(ctx, op, inp, src, [spec], "slice_scatter")


@lowers("Tensor.slice_copy")
def slice_copy(ctx: Context, op) -> None:
    """`x[..., a:b] = y` (and in-place ops on such a slice), as the capture records it."""
    inp, src = _input_and_src(op)
    specs, _ = _slice_specs(op)
    _copy_to(ctx, op, inp, src, specs, "slice_copy")


@lowers("torch.narrow", "Tensor.narrow")
def narrow(ctx: Context, op) -> None:
    dim, start, length = param(op, "dim"), param(op, "start"), param(op, "length")
    if not all(isinstance(v, int) for v in (dim, start, length)):
        raise CannotLower("narrow with a dim, start or length from a tensor is not lowered")
    if start < 0:  # counted from the end before adding the length (start=-2, length=2 ends at the end)
        start += ctx.torch_shape(op.inputs[0])[dim]
    _crop(ctx, op, [(dim, start, start + length, 1)], op.outputs[0].name)


def select_indices(ctx: Context, blob: str, axis: int, indices, out_name: str) -> None:
    """`blob` indexed by constant `indices` along ncnn `axis`: one Crop per run of consecutive
    indices, joined by a Concat (ncnn has no Gather layer)."""
    runs: list[list[int]] = []
    for i in (int(i) for i in indices):
        if runs and runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, i + 1])
    if not runs:
        raise CannotLower("an empty index: ncnn blobs cannot be empty")
    if len(runs) > MAX_STRIDED:
        raise CannotLower(f"indexing with {len(runs)} > {MAX_STRIDED} runs of consecutive indices is not lowered "
                          "(ncnn has no Gather layer)")
    if len(runs) == 1:
        ctx.emit("Crop", "index", [blob], [out_name], {9: [runs[0][0]], 10: [runs[0][1]], 11: [axis]})
        return
    parts = [ctx.temp(out_name) for _ in runs]
    for (start, end), part in zip(runs, parts):
        ctx.emit("Crop", "index", [blob], [part], {9: [start], 10: [end], 11: [axis]})
    ctx.emit("Concat", "index", parts, [out_name], {0: axis})


def _constant_index(ctx: Context, op, what: str):
    """(input operand, index values) of an indexing operator whose index is a constant."""
    src, index = named_input(op, "input", 0), named_input(op, "index", 1)
    values = None if index is None else ctx.constant(index)
    if values is None:
        raise CannotLower(f"{what} with an index computed at run time is not lowered (ncnn has no Gather layer)")
    return src, values


@lowers("torch.index_select", "Tensor.index_select")
def index_select(ctx: Context, op) -> None:
    src, values = _constant_index(ctx, op, "index_select")
    dim = _dim(op)
    size = ctx.torch_shape(src)[dim]
    indices = [int(i) + size if i < 0 else int(i) for i in values.reshape(-1)]
    select_indices(ctx, ctx.blob(src), ctx.axis(src, dim), indices, op.outputs[0].name)


@lowers("torch.gather", "Tensor.gather")
def gather(ctx: Context, op) -> None:
    """A constant index that picks the same entries along dim at every other position is an
    index_select of the input cut to the index's extent; any other gather needs a Gather layer."""
    src, values = _constant_index(ctx, op, "gather")
    dim = _dim(op)
    shape = ctx.torch_shape(src)
    dim = dim + len(shape) if dim < 0 else dim
    if values.ndim != len(shape):
        raise CannotLower(f"gather with a rank-{values.ndim} index into a rank-{len(shape)} input")
    line = values[tuple(slice(None) if d == dim else slice(0, 1) for d in range(values.ndim))]
    if not np.array_equal(np.broadcast_to(line, values.shape), values):
        raise CannotLower("gather with a constant index that differs across the other dims is not lowered "
                          "(ncnn has no Gather layer)")
    cut = [(d, 0, n, 1) for d, n in enumerate(values.shape) if d != dim and n != shape[d]]
    blob = ctx.blob(src)
    if cut:
        blob = ctx.temp(op.outputs[0].name)
        _crop(ctx, op, cut, blob)
    indices = [int(i) + shape[dim] if i < 0 else int(i) for i in line.reshape(-1)]
    select_indices(ctx, blob, ctx.axis(src, dim), indices, op.outputs[0].name)
