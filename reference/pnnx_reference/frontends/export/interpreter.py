"""One FX node at a time under the Python-API tracer: aten calls through the shared aten rule
table (arguments named by the operator's schema), shape arithmetic on the tracer's sizes."""
from __future__ import annotations

import operator

import torch
from torch._ops import HigherOrderOperator, OpOverload
from torch.fx.node import map_arg

from ...errors import ConversionError
from .. import aten
from ..aten import core  # noqa: F401  (registers the core-ATen rules)
from . import nodes as fx


def run_node(node, env: dict):
    if node.op != "call_function":
        raise ConversionError(f"exported program node {node.name}: {node.op} nodes are not supported")
    target = node.target
    value = env.__getitem__
    if target is operator.getitem:
        container, index = map_arg(node.args, value)
        return container[index]
    name = fx.aten_name(node)
    if name in fx.CHECKS:
        return None
    if name is not None:
        kwargs = fx.named_args(node, value)
        if name.endswith("_with_indices") and any(u.target is operator.getitem and u.args[1] == 1
                                                  for u in node.users):
            kwargs["return_indices"] = True  # a max_unpool reads them
        result = aten.call(name, kwargs)
        return _unavailable_beyond(node, result)
    if isinstance(target, HigherOrderOperator):
        raise ConversionError(f"exported program node {node.name}: {target.name()} (control flow or a "
                              f"wrapped region) is not supported; export a model without torch.cond/while_loop")
    if isinstance(target, OpOverload):
        raise ConversionError(f"exported program node {node.name}: {target} is not an aten operator "
                              f"PNNX knows")
    if getattr(target, "__module__", None) in ("_operator", "operator", "math", "builtins") \
            or target in _SYM_FUNCTIONS:
        return target(*map_arg(node.args, value), **map_arg(node.kwargs, value))
    raise ConversionError(f"exported program node {node.name}: cannot convert {target}")


_SYM_FUNCTIONS = {torch.sym_int, torch.sym_float, torch.sym_max, torch.sym_min, torch.sym_not,
                  torch.sym_sqrt, torch.sym_ite}


def _unavailable_beyond(node, result):
    """A rule that returns the one result a Python API call gives for an operator with more
    (native_layer_norm's mean and rstd) fills the rest with Unavailable."""
    returns = len(node.target._schema.returns)
    if returns > 1 and isinstance(result, torch.Tensor):
        return (result,) + tuple(Unavailable(node, i) for i in range(1, returns))
    return result


class Unavailable:
    """A result the Python API call does not give (the saved statistics of a normalisation);
    using it is an error rather than a wrong value."""

    def __init__(self, node, index: int):
        self.where = f"{node.name} ({node.target}) result {index}"

    def __getattr__(self, name):
        raise ConversionError(f"exported program: {self.where} is used, but PNNX's operator does not "
                              f"compute it")
