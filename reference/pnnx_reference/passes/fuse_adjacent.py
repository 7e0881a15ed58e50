"""Merge a reshape that feeds only another reshape, and compose adjacent permutes."""
from __future__ import annotations

from ..ir import Graph, Operator
from .rewire import set_inputs, single_consumer

_RESHAPES = {"Tensor.view", "Tensor.reshape", "torch.reshape"}
_PERMUTES = {"Tensor.permute", "torch.permute"}


def _static(op: Operator, key: str) -> bool:
    return len(op.inputs) == 1 and isinstance(op.params.get(key), list)


def _merge(graph: Graph, first: Operator, second: Operator) -> None:
    """`second` now reads what `first` read; `first` goes away."""
    set_inputs(graph, second, [first.inputs[0]], second.inputnames)
    graph.remove_operator(first)


def run(graph: Graph, context=None) -> bool:
    changed = False
    for op in list(graph.ops):
        if op not in graph.ops or len(op.outputs) != 1:
            continue
        nxt = single_consumer(op.outputs[0])
        if nxt is None:
            continue
        if op.type in _RESHAPES and nxt.type in _RESHAPES and _static(op, "shape") and _static(nxt, "shape"):
            _merge(graph, op, nxt)
            changed = True
        elif op.type in _PERMUTES and nxt.type in _PERMUTES and _static(op, "dims") and _static(nxt, "dims"):
            first, second = op.params["dims"], nxt.params["dims"]
            nxt.params["dims"] = [first[d] for d in second]
            _merge(graph, op, nxt)
            changed = True
    return changed
