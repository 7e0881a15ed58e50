"""repeat/expand -> Tile, Tensor.copy_ -> its source (Reshape + Tile when it broadcasts),
flip -> Flip, cumsum -> CumulativeSum, roll -> Slice + Concat."""
from __future__ import annotations

from .context import CannotLower, Context, dims_params, param
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
