"""cat/concat -> Concat; stack -> a Reshape of each input to hold the new axis, then Concat."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, dims_params, single_dim
from ..registry import LEADING, LOWERINGS, MOVES_DATA


@LOWERINGS.register("torch.cat", "torch.concat", "torch.concatenate", batch=LEADING, **MOVES_DATA)
def cat(ctx: Context, op) -> None:
    ref = op.outputs[0]
    axis = ctx.axis(ref, single_dim(op))
    ctx.emit("Concat", "cat", [ctx.blob(x) for x in op.inputs], [ref.name], {0: axis})


@LOWERINGS.register("torch.stack", batch=LEADING, **MOVES_DATA)
def stack(ctx: Context, op) -> None:
    out = op.outputs[0]
    axis = ctx.axis(out, single_dim(op))
    shape = ctx.shape(out)
    piece = shape[:axis] + [1] + shape[axis + 1:]
    if len(piece) > 4:
        raise Unsupported("stack to a rank > 4 blob")
    parts = []
    for x in op.inputs:
        t = ctx.temp(out.name)
        ctx.emit("Reshape", "reshape", [ctx.blob(x)], [t], dims_params(piece))
        parts.append(t)
    ctx.emit("Concat", "stack", parts, [out.name], {0: axis})
