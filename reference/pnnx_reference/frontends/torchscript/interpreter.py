"""Replay a TorchScript graph node by node with real values, calling the Python API
(`prim::` structure here, `aten::` calls through the `aten` registry)."""
from __future__ import annotations

import torch

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
    done = _done_after(block)
    for i, node in enumerate(block.nodes()):
        if _key(node) not in replayed:
            fused = fusions.try_fuse(node, env)
            if fused is not None:
                nodes, result = fused
                replayed.update(_key(n) for n in nodes)
                replayed.update(_key(n) for n in _dead_feeders(block, replayed))
                env[nodes[-1].outputsAt(0)] = result  # a fusion gives its last node's one result read
            else:
                run_node(node, env)
        for value in done.get(i, ()):  # as a plain forward frees them: the tracer keeps no value alive
            env.pop(value, None)
    return [env[v] for v in block.outputs()]


def _done_after(block) -> dict[int, list]:
    """Node index -> the values the block's nodes define that no later node (nor a block
    nested in one, nor the block's own outputs) reads."""
    nodes = list(block.nodes())
    last: dict = {}
    for i, node in enumerate(nodes):
        for value in node.outputs():
            last[value] = i
        for value in _reads(node):
            if value in last:
                last[value] = i
    for value in block.outputs():
        last.pop(value, None)
    done: dict[int, list] = {}
    for value, i in last.items():
        done.setdefault(i, []).append(value)
    return done


def _reads(node):
    """Every value `node` reads, in the blocks nested in it too; and the values that made its
    inputs, two producers back, which a fusion starting at it may read instead (fusions.py:
    `x.unsqueeze(-1)` replayed as the one call on x)."""
    for value in node.inputs():
        yield value
        for made in value.node().inputs():
            yield made
            yield from made.node().inputs()
    for block in node.blocks():
        for inner in block.nodes():
            yield from _reads(inner)
        yield from block.outputs()


_SHAPE_KINDS = {"aten::size", "prim::NumToTensor", "aten::Int", "prim::ListConstruct", "prim::Constant"}


def _dead_feeders(block, replayed: set) -> list:
    """Shape arithmetic (x.size(1), lists of sizes) read only by nodes a fusion replaced."""
    dead, changed = [], True
    while changed:
        changed = False
        for node in block.nodes():
            if node.kind() not in _SHAPE_KINDS or _key(node) in replayed or not node.outputsSize():
                continue
            users = [u.user for v in node.outputs() for u in v.uses()]
            if users and all(_key(u) in replayed for u in users):
                replayed.add(_key(node))
                dead.append(node)
                changed = True
    return dead


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
        used = tuple(bool(v.uses()) for v in node.outputs())
        name = kind[len("aten::"):]
        spelled = aten.spelling.from_stack(node.sourceRange(), name)
        results = _single(node, aten.call(name, schema.named_args(node, args), used, spelled))
    else:
        results = _single(node, _library_op(kind)(*args))
    for value, result in zip(node.outputs(), results):
        env[value] = result


def _library_op(kind: str):
    """`torchvision::roi_align` and other libraries' registered operators: called as
    `torch.ops.torchvision.roi_align`, which the tracer records as a custom operator."""
    namespace, _, name = kind.partition("::")
    try:
        return getattr(getattr(torch.ops, namespace), name)
    except (AttributeError, RuntimeError):
        raise ConversionError(f"TorchScript operator {kind} is not supported") from None


def _single(node, result) -> list:
    if node.outputsSize() == 1:
        return [result]
    if not isinstance(result, (tuple, list)) or len(result) != node.outputsSize():
        raise ConversionError(f"TorchScript operator {node.kind()}: its rule gave "
                              f"{type(result).__name__}, not the {node.outputsSize()} results the graph reads")
    return list(result)


prims.bind(run_block)  # control flow recurses
