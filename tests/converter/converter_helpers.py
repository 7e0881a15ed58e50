"""Shared helpers for the converter tests (imported as a plain module)."""
from __future__ import annotations

from pnnx_reference.ir import Graph


def types(graph: Graph) -> list[str]:
    return [op.type for op in graph.ops]


def op_of(graph: Graph, op_type: str):
    found = [op for op in graph.ops if op.type == op_type]
    assert len(found) == 1, f"{op_type}: {len(found)} ops in {types(graph)}"
    return found[0]


def check_links(graph: Graph) -> None:
    """Producer/consumer links agree with op inputs/outputs, and ops are in topological order."""
    seen = set()
    for op in graph.ops:
        for operand in op.inputs:
            assert id(operand) in seen, f"{op.name} reads {operand.name} before it is produced"
            assert op in operand.consumers
        for operand in op.outputs:
            assert operand.producer is op
            seen.add(id(operand))
    assert seen == {id(o) for o in graph.operands}
