"""cat/concat -> Concat of the non-empty operands (passes/empty_operands.py), stack ->
Unsqueeze + Concat."""
from __future__ import annotations

from ....passes.empty_operands import concatenated
from ..builder import axis
from ..registry import LOWERINGS


@LOWERINGS.register("torch.cat", "torch.concat", "torch.concatenate")
def cat(b, op):
    parts = concatenated(op)
    if len(parts) == 1:
        b.node("Identity", [parts[0].name], b.y(op))
        return
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.outputs[0]))
    b.node("Concat", [o.name for o in parts], b.y(op), axis=dim)


@LOWERINGS.register("torch.stack")
def stack(b, op):
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.outputs[0]))
    axes = b.const([dim], hint="axes")
    parts = [b.node("Unsqueeze", [o.name, axes]) for o in op.inputs]
    b.node("Concat", parts, b.y(op), axis=dim)
