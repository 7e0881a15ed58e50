"""Replay a TorchScript graph node by node with real values, calling the Python API
(`prim::` structure here, `aten::` calls through the `aten` registry)."""
from __future__ import annotations

import torch

from ..errors import ConversionError
from . import aten, prims


def run_graph(graph, inputs: tuple):
    env = dict(zip(graph.inputs(), inputs))
    outputs = run_block(graph, env)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def run_block(block, env: dict) -> list:
    for node in block.nodes():
        run_node(node, env)
    return [env[v] for v in block.outputs()]


def run_node(node, env: dict) -> None:
    kind = node.kind()
    args = [env[v] for v in node.inputs()]
    if kind in prims.RULES:
        results = prims.RULES[kind](node, args, env)
    elif kind.startswith("aten::"):
        results = _single(node, aten.call(node, args))
    else:
        raise ConversionError(f"TorchScript operator {kind} is not supported")
    for value, result in zip(node.outputs(), results):
        env[value] = result


def _single(node, result) -> list:
    if node.outputsSize() == 1:
        return [result]
    return list(result)


prims.bind(run_block)  # prim::If / prim::Loop run nested blocks
_ = torch  # the registries import torch; keep the dependency visible here
