"""Elements reordered along dims: flip -> Slice with step -1, roll -> Slice + Concat."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import INT64_MAX, axis, int_list
from ..registry import LOWERINGS


@LOWERINGS.register("torch.flip", "Tensor.flip")
def flip(ctx, op):
    dims = [axis(d, ctx.rank(op.inputs[0])) for d in int_list(op.params["dims"])]
    n = len(dims)
    ctx.node("Slice", [ctx.x(op), ctx.const([-1] * n, hint="starts"),
                     ctx.const([-INT64_MAX - 1] * n, hint="ends"), ctx.const(dims, hint="axes"),
                     ctx.const([-1] * n, hint="steps")], ctx.y(op))


@LOWERINGS.register("torch.roll", "Tensor.roll")
def roll(ctx, op):
    """Per rolled dim: the last `shift` elements moved to the front (Slice, Slice, Concat)."""
    shape = ctx.shape(op.inputs[0])
    shifts, dims = int_list(op.params.get("shifts")), int_list(op.params.get("dims"))
    if not dims or len(shifts) != len(dims) or any(shape[d] < 0 for d in dims):
        raise Unsupported("roll needs dims and static sizes (the flattened form is not lowered)")
    current = ctx.x(op)
    for k, (shift, dim) in enumerate(zip(shifts, dims)):
        dim = axis(dim, len(shape))
        n = shape[dim]
        cut = (n - shift % n) % n
        out = ctx.y(op) if k == len(dims) - 1 else 1
        if cut == 0:
            current = ctx.node("Identity", [current], out)
            continue
        axes = ctx.const([dim], hint="axes")
        tail = ctx.node("Slice", [current, ctx.const([cut], hint="starts"),
                                ctx.const([n], hint="ends"), axes])
        head = ctx.node("Slice", [current, ctx.const([0], hint="starts"),
                                ctx.const([cut], hint="ends"), axes])
        current = ctx.node("Concat", [tail, head], out, axis=dim)
