"""Slicing: chunk/split/tensor_split/unbind -> Slice; slice/select/slice_copy/narrow -> Crop;
slice_scatter and Tensor.slice_copy (a write into a slice) -> CopyTo. Sizes come from the
(static) operand shapes, so every split form lowers the same way. Every lowering here only
moves values (Slice, Crop, Reshape, CopyTo), so it is exact on bool and integer blobs too."""
from __future__ import annotations

import math

from ....errors import Unsupported
from ..context import Context, dims_params, param, required_inputs, single_dim
from ..crops import INT_MAX, crop, sized_crop
from ..registry import LEADING, LOWERINGS, MOVES_DATA
from ..shape_expr import is_dynamic


def _slice_along(ctx: Context, op, axis: int, squeeze: bool) -> None:
    sizes = [ctx.shape(o)[axis] if not squeeze else 1 for o in op.outputs]
    if -1 in sizes:
        raise Unsupported("dynamic split sizes are not lowered")
    if 0 in sizes:
        raise Unsupported("a split yields an empty tensor: ncnn blobs cannot be empty")
    if not squeeze:
        ctx.emit("Slice", "slice", [ctx.blob(op.inputs[0])], [o.name for o in op.outputs], {0: sizes, 1: axis})
        return
    # a 0-d part is carried as the 1-element blob the Slice writes (context.shape)
    temps = [ctx.temp(o.name) if ctx.shape(o) else o.name for o in op.outputs]
    ctx.emit("Slice", "unbind", [ctx.blob(op.inputs[0])], temps, {0: sizes, 1: axis})
    for t, o in zip(temps, op.outputs):
        if t != o.name:
            ctx.emit("Reshape", "reshape", [t], [o.name], dims_params(ctx.shape(o)))


@LOWERINGS.register("torch.chunk", "Tensor.chunk", "torch.split", "Tensor.split", "torch.tensor_split",
                    "Tensor.tensor_split", batch=LEADING, **MOVES_DATA)
def split(ctx: Context, op) -> None:
    _slice_along(ctx, op, ctx.axis(op.inputs[0], single_dim(op)), squeeze=False)


@LOWERINGS.register("torch.unbind", "Tensor.unbind", batch=LEADING, **MOVES_DATA)
def unbind(ctx: Context, op) -> None:
    _slice_along(ctx, op, ctx.axis(op.inputs[0], single_dim(op)), squeeze=True)


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
                raise Unsupported("select index from a tensor is not lowered")
            start, end, step, selected = sel, (sel + 1 if sel != -1 else INT_MAX), 1, True
        specs.append((dim, start, end, step))
    return specs, selected


@LOWERINGS.register("Tensor.slice", "torch.slice_copy", batch=LEADING, **MOVES_DATA)
def slice_(ctx: Context, op) -> None:
    if op.input("start") is not None or op.input("end") is not None or _slices_dynamic_dim(op):
        sized_crop(ctx, op)
        return
    specs, selected = _slice_specs(op)
    if not selected:
        crop(ctx, op, specs, op.outputs[0].name)
        return
    _crop_then_reshape(ctx, op, specs)


def _slices_dynamic_dim(op) -> bool:
    """Whether a dim the slice cuts has a size that follows the input."""
    shape = op.inputs[0].shape
    dims = op.params.get("dims", [op.params.get("dim", 0)])
    return is_dynamic(shape) and all(isinstance(d, int) for d in dims) and any(shape[d] < 0 for d in dims)


def _crop_then_reshape(ctx: Context, op, specs) -> None:
    out = op.outputs[0]
    shape = ctx.shape(out)
    if not shape:  # a 0-d result is carried as a 1-element blob (context.shape), the crop itself
        crop(ctx, op, specs, out.name)
        return
    t = ctx.temp(out.name)
    crop(ctx, op, specs, t)
    ctx.emit("Reshape", "reshape", [t], [out.name], dims_params(shape))


@LOWERINGS.register("Tensor.select", "torch.select", batch=LEADING, **MOVES_DATA)
def select(ctx: Context, op) -> None:
    dim, index = int(param(op, "dim")), param(op, "index")
    if not isinstance(index, int):
        raise Unsupported("select index from a tensor is not lowered")
    _crop_then_reshape(ctx, op, [(dim, index, index + 1 if index != -1 else INT_MAX, 1)])


def _bound(value, size: int, default: int) -> int:
    """A slice bound clamped into [0, size], negatives counted from the end."""
    if value is None or value >= INT_MAX:
        value = default
    if not isinstance(value, int):
        raise Unsupported("slice bounds from tensors are not lowered")
    return max(0, value + size) if value < 0 else min(value, size)


def _copy_box(ctx: Context, inp, specs) -> tuple[list[int], list[int], list[int]]:
    """CopyTo starts and axes for unit-step `specs`, and the torch shape of the box they cover."""
    box, starts, axes = ctx.torch_shape(inp), [], []
    for dim, start, end, step in specs:
        if step not in (1, None):
            raise Unsupported(f"a write into a slice with step {step} is not lowered (ncnn CopyTo has no step)")
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
        raise Unsupported("a write into an empty slice: ncnn blobs cannot be empty")
    box = box[1:] if ctx.has_batch(inp) else box
    blob, have = ctx.blob(src), ctx.shape(src)
    if have != box:
        if math.prod(have) != math.prod(box):
            raise Unsupported(f"a value of shape {tuple(ctx.torch_shape(src))} broadcast into a slice of "
                              f"shape {tuple(box)} is not lowered (ncnn CopyTo copies the value as is)")
        if len(box) > 4:
            raise Unsupported("a write into a slice of a rank > 4 blob is not lowered")
        blob, reshaped = ctx.temp(op.outputs[0].name), blob
        ctx.emit("Reshape", "reshape", [reshaped], [blob], dims_params(box))
    ctx.emit("CopyTo", prefix, [ctx.blob(inp), blob], [op.outputs[0].name], {9: starts, 11: axes})


@LOWERINGS.register("torch.slice_scatter", batch=LEADING, **MOVES_DATA)
def slice_scatter(ctx: Context, op) -> None:
    inp, src = required_inputs(op, "input", "src")
    spec = (param(op, "dim", 0), param(op, "start", 0), param(op, "end", INT_MAX), param(op, "step", 1))
    _copy_to(ctx, op, inp, src, [spec], "slice_scatter")


@LOWERINGS.register("Tensor.slice_copy", batch=LEADING, **MOVES_DATA)
def slice_copy(ctx: Context, op) -> None:
    """`x[..., a:b] = y` (and in-place ops on such a slice), as the capture records it."""
    inp, src = required_inputs(op, "input", "src")
    specs, _ = _slice_specs(op)
    _copy_to(ctx, op, inp, src, specs, "slice_copy")


@LOWERINGS.register("torch.narrow", "Tensor.narrow", batch=LEADING, **MOVES_DATA)
def narrow(ctx: Context, op) -> None:
    dim, start, length = param(op, "dim"), param(op, "start"), param(op, "length")
    if not all(isinstance(v, int) for v in (dim, start, length)):
        raise Unsupported("narrow with a dim, start or length from a tensor is not lowered")
    if start < 0:  # counted from the end before adding the length (start=-2, length=2 ends at the end)
        start += ctx.torch_shape(op.inputs[0])[dim]
    crop(ctx, op, [(dim, start, start + length, 1)], op.outputs[0].name)
