"""Argument names of `aten::` nodes, and the constant values a graph passes by name."""
from __future__ import annotations

import functools

import torch


@functools.lru_cache(maxsize=None)
def _parsed(text: str):
    return torch._C.parse_schema(text)


def argument_names(node) -> list[str]:
    """The schema's argument names for `node`'s inputs (positional, in order)."""
    try:
        schema = node.schema()
    except RuntimeError:
        return []
    if schema == "(no schema)":
        return []
    return [a.name for a in _parsed(schema).arguments]


def constant_value(value):
    """The Python value of a constant graph value (or list of constants); raises KeyError."""
    node = value.node()
    if node.kind() == "prim::Constant":
        return value.toIValue()
    if node.kind() == "prim::ListConstruct":
        return [constant_value(v) for v in node.inputs()]
    raise KeyError(value.debugName())


def graph_constants(graph) -> dict:
    """name -> value for every constant argument of the graph's aten:: calls."""
    found = {}
    for node in graph.nodes():
        if not node.kind().startswith("aten::"):
            continue
        for name, value in zip(argument_names(node), node.inputs()):
            try:
                found.setdefault(name, constant_value(value))
            except KeyError:
                continue
    return found
