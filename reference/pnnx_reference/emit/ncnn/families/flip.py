"""Elements reordered along dims: flip -> Flip, roll -> Slice + Concat."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..registry import LEADING, LOWERINGS, MOVES_DATA


@LOWERINGS.register("torch.flip", "Tensor.flip", batch=LEADING, **MOVES_DATA)
def flip(ctx: Context, op) -> None:
    dims = param(op, "dims")
    dims = [dims] if isinstance(dims, int) else list(dims)
    axes = sorted(ctx.axis(op.inputs[0], int(d)) for d in dims)
    ctx.emit("Flip", "flip", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: axes})


@LOWERINGS.register("torch.roll", "Tensor.roll", batch=LEADING, **MOVES_DATA)
def roll(ctx: Context, op) -> None:
    shifts, dims = param(op, "shifts"), param(op, "dims")
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    if len(dims) != len(shifts) or not dims:
        raise Unsupported("roll over the flattened tensor is not lowered")
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
