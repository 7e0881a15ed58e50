"""One FX node at a time under the Python-API tracer: aten calls through the shared aten rule
table (arguments named by the operator's schema), shape arithmetic on the tracer's sizes."""
from __future__ import annotations

import operator

import torch
from torch._ops import HigherOrderOperator, OpOverload
from torch.fx.node import map_arg

from ...errors import ConversionError
from .. import aten
from ..python import naming
from . import nodes as fx
from .dynamic import size_source


def run_node(node, env: dict):
    if node.op != "call_function":
        raise ConversionError(f"exported program node {node.name}: {node.op} nodes are not supported")
    target = node.target
    value = env.__getitem__
    if fx.feeds_only_checks(node):
        return None
    if target is operator.getitem:
        container, index = map_arg(node.args, value)
        return container[index]
    name = fx.aten_name(node)
    if name in fx.CHECKS:
        return None
    if name == "slice" and node.args[0] in env.get(_SLICES, {}):
        return _chained_slice(node, env)
    if name == "sym_size" and (source := size_source(node)) is not None:
        return aten.call(name, {"self": env[source[0]], "dim": source[1]})
    if name is not None:
        kwargs = fx.named_args(node, value)
        result = aten.call(name, kwargs, _used_results(node),
                           aten.spelling.from_torch_fn(node.meta.get("torch_fn")))
        if name == "slice":  # the start of a chain
            env.setdefault(_SLICES, {})[node] = (node.args[0], _slice_item(kwargs))
        return _unavailable_beyond(node, result)
    if isinstance(target, HigherOrderOperator):
        raise ConversionError(f"exported program node {node.name}: {target.name()} (control flow or a "
                              f"wrapped region) is not supported; export a model without torch.cond/while_loop")
    if isinstance(target, OpOverload) and naming.is_custom_op(target):  # recorded as the .pt door does
        return target(*map_arg(node.args, value), **map_arg(node.kwargs, value))
    if isinstance(target, OpOverload):
        raise ConversionError(f"exported program node {node.name}: {target} is not an aten operator "
                              f"PNNX knows")
    if getattr(target, "__module__", None) in ("_operator", "operator", "math", "builtins") \
            or target in _SYM_FUNCTIONS:
        return target(*map_arg(node.args, value), **map_arg(node.kwargs, value))
    raise ConversionError(f"exported program node {node.name}: cannot convert {target}")


def _used_results(node) -> tuple[bool, ...] | None:
    """Which results of a several-result operator the graph reads (max_pool2d_with_indices
    whose indices a max_unpool reads), None for one result."""
    returns = len(node.target._schema.returns) if isinstance(node.target, OpOverload) else 1
    if returns < 2:
        return None
    read = {u.args[1] for u in node.users if u.target is operator.getitem and u.users}
    return tuple(i in read for i in range(returns))


_SYM_FUNCTIONS = {torch.sym_int, torch.sym_float, torch.sym_max, torch.sym_min, torch.sym_not,
                  torch.sym_sqrt, torch.sym_ite}


def _unavailable_beyond(node, result):
    """A rule that returns the one result a Python API call gives for an operator with more
    (native_layer_norm's mean and rstd) fills the rest with Unavailable."""
    returns = len(node.target._schema.returns)
    if returns > 1 and isinstance(result, torch.Tensor):
        return (result,) + tuple(Unavailable(node, i) for i in range(1, returns))
    if returns > 1 and isinstance(result, tuple):  # (values, None): nobody reads the indices
        return tuple(Unavailable(node, i) if r is None else r for i, r in enumerate(result))
    return result


class Unavailable:
    """A result the Python API call does not give (the saved statistics of a normalisation);
    using it is an error rather than a wrong value."""

    def __init__(self, node, index: int):
        self.where = f"{node.name} ({node.target}) result {index}"

    def __getattr__(self, name):
        raise ConversionError(f"exported program: {self.where} is used, but PNNX's operator does not "
                              f"compute it")


# A chain of slices (`m[:, a:b, c:d]` is slice(slice(m, 1, a, b), 2, c, d)) is read as one
# index on its base, so that an in-place write through it is the Python door's
# `m[:, a:b, c:d] = v` (Tensor.slice_copy) rather than a write into a view of a view.
_SLICES = "slices"  # env key: slice node -> (base node, {dim: slice})


def _slice_item(kwargs: dict) -> dict:
    """{dim: its slice}; a full one (torch.export writes `:` of a dynamic dim as slice(0, INT64_MAX))
    is `slice(None)`, which the index then skips as the aten rule does (a static `:` is not written)."""
    start, end, step = kwargs.get("start"), kwargs.get("end"), kwargs.get("step", 1)
    end = None if end is None or end >= 9223372036854775807 else end
    start = None if isinstance(start, int) and start == 0 else start
    step = None if isinstance(step, int) and step == 1 else step
    return {kwargs["dim"]: slice(start, end, step)}


def _chained_slice(node, env: dict):
    base, items = env[_SLICES][node.args[0]]
    kwargs = fx.named_args(node, env.__getitem__)
    source = env[base]
    dim = kwargs["dim"] % source.dim()
    items = {d % source.dim(): s for d, s in items.items()}
    if dim in items:  # the same dim sliced twice: an ordinary slice of the view
        return aten.call("slice", {**kwargs, "self": env[node.args[0]]})
    items = {**items, **_slice_item({**kwargs, "dim": dim})}
    env[_SLICES][node] = (base, items)
    index = tuple(items.get(d, slice(None)) for d in range(max(items) + 1))
    return source[index]
