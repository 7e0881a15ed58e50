"""Remove operators whose results nobody uses (graph inputs and outputs always stay)."""
from __future__ import annotations

from ..ir import Graph

_KEPT = {"pnnx.Input", "pnnx.Output"}


def run(graph: Graph, context=None) -> bool:
    changed = False
    for op in reversed(list(graph.ops)):
        if op.type in _KEPT or any(out.consumers for out in op.outputs):
            continue
        graph.remove_operator(op)
        changed = True
    return changed
