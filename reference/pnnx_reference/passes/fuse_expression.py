"""Inline an expression into its only consumer when that is an expression too, so
`torch.sqrt((2 * x + y) / 12)` becomes one `sqrt(div(add(mul(@0,2),@1),12))`.

A fusion stops where the result would nest deeper than `expression.MAX_DEPTH` (a chain of
600 `x = x + 1` would otherwise be one expression no reader or Python parser accepts) or
grow past MAX_CHARS (`y = y * y` repeated doubles the text at every step)."""
from __future__ import annotations

from ..expression import MAX_DEPTH, depth
from ..ir import Graph, Operator
from .exprtext import InputList, substitute
from .rewire import set_inputs

EXPR = "pnnx.Expression"
MAX_CHARS = 4096


def _fusable(op: Operator) -> Operator | None:
    if op.type != EXPR or len(op.outputs) != 1:
        return None
    consumers = op.outputs[0].consumers
    if len(set(map(id, consumers))) != 1 or consumers[0].type != EXPR:
        return None
    return consumers[0]


def _inline(graph: Graph, producer: Operator, consumer: Operator) -> bool:
    """Fuse `producer` into `consumer`; False (and no change) when the result is too big."""
    fused = InputList()
    out = producer.outputs[0]

    def expand(i: int) -> str:
        operand = consumer.inputs[i]
        if operand is out:
            return substitute(producer.params["expr"], lambda j: fused.ref(producer.inputs[j]))
        return fused.ref(operand)

    text = substitute(consumer.params["expr"], expand)
    if len(text) > MAX_CHARS or depth(text) > MAX_DEPTH:
        return False
    consumer.params["expr"] = text
    set_inputs(graph, consumer, fused.operands)
    graph.remove_operator(producer)
    return True


def run(graph: Graph, context=None) -> bool:
    changed = True
    any_change = False
    while changed:
        changed = False
        for op in list(graph.ops):
            consumer = _fusable(op)
            if consumer is not None and _inline(graph, op, consumer):
                changed = any_change = True
    return any_change
