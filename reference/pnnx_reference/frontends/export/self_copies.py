"""Copies of a view onto the same view. A regenerated `_pnnx.py` writes an in-place call on a
slice back (`v_2 = v_1[:, 1:3]; v_3 = v_2.fill_(-1.0); v_1[:, 1:3] = v_3`); torch.export
records the write-back as copy_ of the filled slice into a fresh slice of the same base, with
the same bounds: the same memory, so the copy changes nothing. It is skipped (its value is its
destination's), and the graph is the one the in-place call alone gave, as on the Python door."""
from __future__ import annotations

from torch.fx.node import Node

from . import nodes as fx
from .steps import Plan, Step

# Calls whose result is a view of their first argument, fixed by their other arguments.
_VIEWS = {"slice", "select", "narrow", "view", "unsqueeze", "squeeze", "transpose", "permute", "t",
          "diagonal", "alias", "unfold"}


def plan_self_copies(plan: Plan, graph) -> None:
    for node in graph.nodes:
        if fx.aten_name(node) == "copy_" and len(node.args) >= 2 and plan.free([node]) \
                and _same_view(node.args[0], _written(node.args[1])):
            plan.add(Step([node], [node.args[0]], [node] if node.users else [], _destination,
                          "copy of a view onto itself (skipped)"))


def _destination(values: list) -> list:
    return values[:1]


def _written(node):
    """What an in-place call returns is its first argument, written (`fill_`, `mul_`)."""
    while isinstance(node, Node) and _in_place(node):
        node = node.args[0]
    return node


def _in_place(node: Node) -> bool:
    schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
    if schema is None or not schema.arguments or not node.args:
        return False
    alias = schema.arguments[0].alias_info
    return alias is not None and alias.is_write


def _same_view(a, b) -> bool:
    """Whether `a` and `b` are the same memory at every input size: one node, or one view call
    with the same arguments of the same view."""
    if a is b:
        return isinstance(a, Node)
    if not (isinstance(a, Node) and isinstance(b, Node)) or fx.aten_name(a) not in _VIEWS:
        return False
    return a.target == b.target and a.kwargs == b.kwargs and len(a.args) == len(b.args) \
        and _same_view(a.args[0], b.args[0]) and a.args[1:] == b.args[1:]
