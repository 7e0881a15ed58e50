"""Argument names of `aten::` nodes, and the constant values a graph passes by name."""
from __future__ import annotations

import functools

import torch

from ...errors import ConversionError

# ScalarType codes as TorchScript stores them in constants.
_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128,
           torch.bool, torch.qint8, torch.quint8, torch.qint32, torch.bfloat16]

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


def named_args(node, args) -> dict:
    """The values of an `aten::` node's inputs by their schema names (ScalarType codes as dtypes)."""
    names = argument_names(node)
    if len(names) < len(args):
        raise ConversionError(f"TorchScript operator {node.kind()}: cannot read its schema")
    kwargs = dict(zip(names, args))
    for name in ("dtype", "scalar_type"):  # TorchScript stores a ScalarType as its int code
        if name in kwargs:
            kwargs[name] = scalar_type(kwargs[name])
    return kwargs


def scalar_type(value):
    """A ScalarType argument as a torch.dtype (TorchScript keeps its int code); others as they are."""
    return _DTYPES[value] if isinstance(value, int) and not isinstance(value, bool) else value


def constant_value(value):
    """The Python value of a constant graph value (or list of constants); raises KeyError."""
    node = value.node()
    if node.kind() == "prim::Constant":
        return value.toIValue()
    if node.kind() == "prim::ListConstruct":
        return [constant_value(v) for v in node.inputs()]
    raise KeyError(value.debugName())


def named_constants(node) -> dict:
    """name -> value for the constant arguments of one aten:: node."""
    found = {}
    for name, value in zip(argument_names(node), node.inputs()):
        try:
            found[name] = constant_value(value)
        except KeyError:
            continue
    return found


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
