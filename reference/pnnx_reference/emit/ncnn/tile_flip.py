"""repeat/expand -> Tile, flip -> Flip, cumsum -> CumulativeSum, roll -> Slice + Concat."""
from __future__ import annotations

from .context import CannotLower, Context, param
from .registry import lowers


@lowers("Tensor.repeat")
def repeat(ctx: Context, op) -> None:
    sizes = [int(s) for s in param(op, "sizes")]
    rank = len(ctx.torch_shape(op.inputs[0]))
    if len(sizes) != rank:
        raise CannotLower("repeat that adds leading dims is not lowered")
    if not ctx.batchless:
        if sizes[0] != 1:
            raise CannotLower("repeats along the batch axis: ncnn blobs have no batch axis")
        sizes = sizes[1:]
    ctx.emit("Tile", "repeat", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {2: sizes})


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
