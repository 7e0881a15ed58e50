"""Canonical order and names (optlevel 2): every pnnx.Attribute sits just before its first
reader, every operand becomes `0`, `1`, ... in the order operators produce them, and every
numbered operator name (`F.relu_3`, `pnnx_expr_2`) is numbered again in graph order.

Capture records a weight where it is first read; a fusion can move that reader later (an
expression built around `q * self.cos` ends where its last operation was), and capturing the
generated `_pnnx.py` again would record the weight there.

Capture numbers operators as it records them, counting the ones later passes fold or remove,
so the raw numbers depend on the pass history; numbering the final graph makes the names a
function of the graph alone, and converting the generated `_pnnx.py` again gives the same
names."""
from __future__ import annotations

import re

from ..ir import Graph, Operator
from ..formats.textfile import is_digits

_EXPR = re.compile(r"pnnx_expr_\d+\Z")


def _rename_operands(graph: Graph) -> None:
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


def _counter(op: Operator) -> str | None:
    """The counter an operator name was drawn from (capture has one for expressions, one for
    all other calls, named `<type>_<n>`), or None for a name chosen otherwise."""
    if op.type == "pnnx.Expression" and _EXPR.match(op.name):
        return "expr"
    prefix, _, number = op.name.rpartition("_")
    if prefix == op.type and is_digits(number):
        return "op"
    return None


def _renumber_ops(graph: Graph) -> None:
    numbered = [(op, _counter(op)) for op in graph.ops]
    numbered = [(op, counter) for op, counter in numbered if counter is not None]
    taken = {op.name for op in graph.ops} - {op.name for op, _ in numbered}
    next_index = {"op": 0, "expr": 0}
    for op, counter in numbered:
        stem = "pnnx_expr" if counter == "expr" else op.type
        name = f"{stem}_{next_index[counter]}"
        while name in taken:  # a name chosen otherwise that looks numbered
            next_index[counter] += 1
            name = f"{stem}_{next_index[counter]}"
        next_index[counter] += 1
        op.name = name
        taken.add(name)


def _attributes_before_readers(graph: Graph) -> None:
    read = {id(x) for op in graph.ops for x in op.inputs}
    waiting: dict[int, Operator] = {}  # an attribute's operand -> its operator, not placed yet
    order = []
    for op in graph.ops:
        if op.type == "pnnx.Attribute" and len(op.outputs) == 1 and id(op.outputs[0]) in read:
            waiting[id(op.outputs[0])] = op
            continue
        for x in op.inputs:
            if id(x) in waiting:
                order.append(waiting.pop(id(x)))
        order.append(op)
    graph.ops[:] = order


def run(graph: Graph, context=None) -> bool:
    _attributes_before_readers(graph)
    _renumber_ops(graph)
    _rename_operands(graph)
    return True
