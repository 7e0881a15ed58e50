"""Replay a TorchScript graph node by node with real values, calling the Python API
(`prim::` structure here, `aten::` calls through the `aten` registry)."""
from __future__ import annotations

from ...errors import ConversionError
from .. import aten
from ..python.valuedep import CURRENT_NODE
from . import fusions, prims, schema


def run_graph(graph, inputs: tuple):
    env = dict(zip(graph.inputs(), inputs))
    outputs = run_block(graph, env)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def run_block(block, env: dict) -> list:
    replayed = set()  # nodes a fusion already ran, by their output names
    for node in block.nodes():
        if _key(node) in replayed:
            continue
        fused = fusions.try_fuse(node, env)
        if fused is not None:
            nodes, result = fused
            replayed.update(_key(n) for n in nodes)
            env[nodes[-1].output()] = result
            continue
        run_node(node, env)
    return [env[v] for v in block.outputs()]


def _key(node) -> tuple:
    return tuple(v.debugName() for v in node.outputs())


def run_node(node, env: dict) -> None:
    kind = node.kind()
    args = [env[v] for v in node.inputs()]
    CURRENT_NODE[0] = node  # names the node in a value-dependent conversion's message
    prim = prims.RULES.lookup(kind)
    if prim is not None:
        results = prim.fn(node, args, env)
    elif kind.startswith("aten::"):
        results = _single(node, aten.call(kind[len("aten::"):], schema.named_args(node, args)))
    else:
        raise ConversionError(f"TorchScript operator {kind} is not supported")
    for value, result in zip(node.outputs(), results):
        env[value] = result


def _single(node, result) -> list:
    if node.outputsSize() == 1:
        return [result]
    return list(result)


prims.bind(run_block, run_graph)  # control flow and replayed submodules recurse
