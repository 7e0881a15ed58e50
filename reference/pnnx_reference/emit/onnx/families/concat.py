"""cat/concat -> Concat of the non-empty operands (passes/empty_operands.py), stack ->
Unsqueeze + Concat."""
from __future__ import annotations

from ....passes.empty_operands import concatenated
from ..builder import axis
from ..registry import LOWERINGS


@LOWERINGS.register("torch.cat", "torch.concat", "torch.concatenate")
def cat(ctx, op):
    parts = concatenated(op)
    if len(parts) == 1:
        ctx.node("Identity", [parts[0].name], ctx.y(op))
        return
    dim = axis(int(op.params.get("dim", 0)), ctx.rank(op.outputs[0]))
    ctx.node("Concat", [o.name for o in parts], ctx.y(op), axis=dim)


@LOWERINGS.register("torch.stack")
def stack(ctx, op):
    dim = axis(int(op.params.get("dim", 0)), ctx.rank(op.outputs[0]))
    axes = ctx.const([dim], hint="axes")
    parts = [ctx.node("Unsqueeze", [o.name, axes]) for o in op.inputs]
    ctx.node("Concat", parts, ctx.y(op), axis=dim)
