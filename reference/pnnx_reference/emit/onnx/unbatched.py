"""torch's unbatched inputs: a convolution, pool, instance norm, fold or unfold given (C, ...)
instead of (N, C, ...) computes what it computes on a batch of one. ONNX's Conv, ConvTranspose,
InstanceNormalization, the pools and Col2Im know the batched form only, so lower.py lowers such
an operator as Unsqueeze(axes=[0]) -> its batched lowering -> Squeeze(axes=[0]) per output.

A lowering declares torch's rule for its operator on its registration, with the ncnn
registry's trait names: `unbatched_rank=k` (an int or fn(op)) is the rank of the unbatched
input 0 (nn.Conv2d: 3); `batched_inputs=k` lifts the first k inputs (max_unpool's indices
too) when they have input 0's rank (default 1); `unbatched_params={...}` overrides params for
the batch of one (attention layers: an unbatched (L, E) is a batch_first (1, L, E), whatever
batch_first says). Any other rank goes to the lowering as it is."""
from __future__ import annotations

import dataclasses

from ...ir import Operand, Operator
from ...registry import Rule


def unbatched_rank(rule: Rule, op: Operator) -> int | None:
    rank = rule.traits.get("unbatched_rank")
    return rank(op) if callable(rank) else rank


def lowering(rule: Rule):
    """The rule's fn, lowering an unbatched input as a batch of one."""
    if rule.traits.get("unbatched_rank") is None:
        return rule.fn

    def lower(ctx, op: Operator) -> None:
        if not op.inputs or ctx.rank(op.inputs[0]) != unbatched_rank(rule, op):
            return rule.fn(ctx, op)
        return lower_as_batch_of_one(ctx, op, rule.fn, int(rule.traits.get("batched_inputs", 1)),
                                     rule.traits.get("unbatched_params"))
    return lower


def lower_as_batch_of_one(ctx, op: Operator, fn, batched_inputs: int = 1, params: dict | None = None) -> None:
    axes = ctx.const([0], hint="axes")
    rank = ctx.rank(op.inputs[0])
    inputs = [_lifted(ctx, o, axes) if i < batched_inputs and o.shape is not None and len(o.shape) == rank
              else o for i, o in enumerate(op.inputs)]
    # consumers stay: a lowering may skip an output nothing reads (attention weights)
    outputs = [Operand(ctx.fresh(f"{o.name}_batched"), _with_batch(o.shape), o.dtype, consumers=o.consumers)
               for o in op.outputs]
    first = len(ctx.nodes)
    fn(ctx, dataclasses.replace(op, inputs=inputs, outputs=outputs, params={**op.params, **(params or {})}))
    produced = {name for node in ctx.nodes[first:] for name in node.output}
    for inner, outer in zip(outputs, op.outputs):
        if inner.name in produced:
            ctx.node("Squeeze", [inner.name, axes], outer.name)


def _lifted(ctx, operand: Operand, axes: str) -> Operand:
    name = ctx.node("Unsqueeze", [operand.name, axes], ctx.fresh(f"{operand.name}_batched"))
    return Operand(name, _with_batch(operand.shape), operand.dtype)


def _with_batch(shape):
    return None if shape is None else [1] + list(shape)
