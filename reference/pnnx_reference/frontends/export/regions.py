"""Wrapped regions that compute what their body computes in an eval-mode conversion, inlined
into the program's graph before it is read: `wrap_with_set_grad_enabled` (a `torch.no_grad()`
or `enable_grad()` block: gradients are not part of the result) and `wrap_with_autocast` with
autocast disabled (transformers' rotary embeddings run in float32 so). Other regions
(control flow, autocast to another dtype) are refused, naming the region.

The user's program is not edited: a program with such regions is replaced by a shallow copy
holding an edited copy of its graph module."""
from __future__ import annotations

import copy
import operator

import torch
from torch._ops import HigherOrderOperator

from ...errors import ConversionError


def _inlinable(node) -> int | None:
    """The index of the body's get_attr among node.args when node is an inlinable region."""
    if node.op != "call_function":
        return None
    if node.target is torch.ops.higher_order.wrap_with_set_grad_enabled:
        return 1
    if node.target is torch.ops.higher_order.wrap_with_autocast and node.args[2] is False:
        return 4  # (device_type, dtype, enabled, cache_enabled, body, *operands)
    return None


def inline_regions(program):
    _refuse_others(program.graph_module.graph)
    if not any(_inlinable(n) is not None for n in program.graph_module.graph.nodes):
        return program
    module = copy.deepcopy(program.graph_module)
    graph = module.graph
    while True:
        node = next((n for n in graph.nodes if _inlinable(n) is not None), None)
        if node is None:
            break
        _inline(module, node, _inlinable(node))
    graph.lint()
    module.recompile()
    edited = copy.copy(program)
    edited._graph_module = module
    return edited


def _inline(module, node, at: int) -> None:
    graph, body_ref = module.graph, node.args[at]
    body = getattr(module, body_ref.target)
    operands = list(node.args[at + 1:])
    placeholders = [n for n in body.graph.nodes if n.op == "placeholder"]
    with graph.inserting_before(node):
        results = graph.graph_copy(body.graph, dict(zip(placeholders, operands)))
    results = results if isinstance(results, (tuple, list)) else (results,)
    for user in list(node.users):
        if user.op == "call_function" and user.target is operator.getitem:
            user.replace_all_uses_with(results[user.args[1]])
            graph.erase_node(user)
    if node.users:  # the region's result used whole
        node.replace_all_uses_with(results[0] if len(results) == 1 else results)
    graph.erase_node(node)
    if not body_ref.users:
        graph.erase_node(body_ref)


def _refuse_others(graph) -> None:
    for node in graph.nodes:
        if node.op == "call_function" and isinstance(node.target, HigherOrderOperator) and _inlinable(node) is None:
            raise ConversionError(f"exported program node {node.name}: {node.target.name()} (control flow or a "
                                  "wrapped region that changes dtypes) is not supported")
