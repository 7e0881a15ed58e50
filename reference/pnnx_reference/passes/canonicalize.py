"""Rename every operand to `0`, `1`, ... in the order operators produce them (optlevel 2)."""
from __future__ import annotations

from ..ir import Graph


def run(graph: Graph, context=None) -> bool:
    index = 0
    seen = set()
    for op in graph.ops:
        for operand in op.outputs:
            if id(operand) not in seen:
                seen.add(id(operand))
                operand.name = str(index)
                index += 1
    order = {id(o): i for i, o in enumerate(o for op in graph.ops for o in op.outputs)}
    graph.operands.sort(key=lambda o: order.get(id(o), len(order)))
    return True
