"""Selections built from ncnn Crop, shared by slicing and indexing: a box cut from a blob
(ncnn Crop has no step, so a strided dim is regrouped by a reshape or cut index by index),
and constant indices along one axis as Crops of consecutive runs plus a Concat (ncnn has no
Gather layer)."""
from __future__ import annotations

from ...errors import Unsupported
from .context import Context, dims_params
from .shape_expr import ShapeRefs, render, scalar_item

INT_MAX = 2147483647  # pnnx's "to the end" slice bound
MAX_STRIDED = 64  # a strided slice becomes one Crop per kept index, then a Concat


def crop(ctx: Context, op, specs, out_name: str) -> None:
    """Crop the box holding the slice; each strided dim then keeps every step-th index (ncnn
    Crop has no step): by a reshape where the box can be widened to a multiple of the step,
    else one Crop per kept index."""
    src = op.inputs[0]
    shape = ctx.torch_shape(src)
    box_shape = list(ctx.shape(src))
    starts, ends, axes, strided = [], [], [], []
    for dim, start, end, step in specs:
        if not all(isinstance(v, int) or v is None for v in (start, end, step)):
            raise Unsupported("slice bounds from tensors are not lowered")
        size = shape[int(dim)]
        # Python's slice bounds: negatives count from the end, and both clamp into [0, size]
        start = 0 if start is None else max(0, start + size) if start < 0 else min(start, size)
        end = size if end is None or end >= INT_MAX else max(0, end + size) if end < 0 else min(end, size)
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
        raise Unsupported(f"strided slice keeping {len(keep)} > {MAX_STRIDED} indices is not lowered "
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
        raise Unsupported("an empty index: ncnn blobs cannot be empty")
    if len(runs) > MAX_STRIDED:
        raise Unsupported(f"indexing with {len(runs)} > {MAX_STRIDED} runs of consecutive indices is not lowered "
                          "(ncnn has no Gather layer)")
    if len(runs) == 1:
        ctx.emit("Crop", "index", [blob], [out_name], {9: [runs[0][0]], 10: [runs[0][1]], 11: [axis]})
        return
    parts = [ctx.temp(out_name) for _ in runs]
    for (start, end), part in zip(runs, parts):
        ctx.emit("Crop", "index", [blob], [part], {9: [start], 10: [end], 11: [axis]})
    ctx.emit("Concat", "index", parts, [out_name], {0: axis})


def sized_crop(ctx: Context, op) -> None:
    """A slice of dims whose sizes follow the input, or with bounds computed from sizes: one Crop
    whose starts/ends/axes (19/20/21) ncnn evaluates at run time (Python's clamping is ncnn's:
    a negative bound counts from the size, an end past it stops there)."""
    src = op.inputs[0]
    if "dims" in op.params:
        steps, selects = op.params.get("steps") or [], op.params.get("selects") or []
        if any(s != 1 for s in steps) or any(s != INT_MAX for s in selects):
            raise Unsupported("a strided or selecting slice of dims that follow the input is not lowered")
        bounds = list(zip(op.params["dims"], op.params["starts"], op.params["ends"]))
    else:
        if op.params.get("step", 1) != 1:
            raise Unsupported("a strided slice with bounds that follow the input is not lowered")
        bounds = [(op.params.get("dim", 0), op.input("start") or op.params.get("start", 0),
                   op.input("end") or op.params.get("end", INT_MAX))]
    refs = ShapeRefs(ctx, [src])
    starts, ends, axes = [], [], []
    for dim, start, end in bounds:
        size = refs.size(src, int(dim))
        starts.append(_bound(start, size, refs, "0"))
        ends.append(_bound(end, size, refs, size))
        axes.append(str(ctx.axis(src, int(dim))))
    ctx.emit("Crop", "slice", refs.blobs, [op.outputs[0].name],
             {19: ",".join(starts), 20: ",".join(ends), 21: ",".join(axes)})


def _bound(value, size: str, refs: ShapeRefs, default: str) -> str:
    """A slice bound as an ncnn expression. ncnn counts a negative bound from the end as Python
    does, but reads outside the blob below -size where Python clamps to 0: a bound that may be
    negative is held at -size or above."""
    if value is None or (isinstance(value, int) and value >= INT_MAX):
        return default
    if isinstance(value, int):
        return str(value) if value >= 0 else f"max({value},neg({size}))"
    tree, operands = scalar_item(value)
    return f"max({render(tree, operands, refs)},neg({size}))"
