"""Node patterns replayed as one PyTorch operator: `MatMul(x, W) -> Add(b)` with constant W and b
is `nn.Linear` (the way torch.onnx writes a Linear over a 3-d input); `Log(Sigmoid(x))` is
F.logsigmoid (torch.onnx's spelling of it, which rounds otherwise than torch's kernel). A fused node is a `Node`
of the `pnnx` domain whose rule lives beside the ops it replaces."""
from __future__ import annotations

from collections import Counter

import torch

from .node import Node


def apply(nodes: list[Node], constants: dict[str, torch.Tensor], outputs: list[str]) -> list[Node]:
    readers = Counter([n for node in nodes for n in node.inputs if n] + list(outputs))
    by_input: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            by_input.setdefault(name, []).append(node)
    out, dropped = [], set()
    for node in nodes:
        if id(node) in dropped:
            continue
        fused = _matmul_add(node, constants, readers, by_input) or _log_sigmoid(node, readers, by_input)
        if fused is not None:
            fused_node, add = fused
            dropped.add(id(add))
            out.append(fused_node)
            continue
        out.append(node)
    return out


def _matmul_add(node, constants, readers, by_input):
    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
        return None
    weight = constants.get(node.inputs[1])
    if weight is None or weight.dim() != 2 or not weight.is_floating_point():
        return None
    out = node.outputs[0]
    if readers[out] != 1 or out not in by_input or by_input[out][0].op_type != "Add":
        return None
    add = by_input[out][0]
    other = add.inputs[1] if add.inputs[0] == out else add.inputs[0]
    bias = constants.get(other)
    n = weight.shape[1]
    if bias is None or bias.dtype != weight.dtype or bias.numel() != n or (bias.dim() and bias.shape[-1] != n):
        return None
    if bias.dim() > 1:  # a [1, 1, N] bias would add leading dims to a lower-rank product
        return None
    fused = Node("Linear", "pnnx", node.name, node.key, [node.inputs[0], node.inputs[1], other],
                 list(add.outputs), {})
    return fused, add


def _log_sigmoid(node, readers, by_input):
    if node.op_type != "Sigmoid" or node.domain not in ("", "ai.onnx"):
        return None
    out = node.outputs[0]
    if readers[out] != 1 or out not in by_input or by_input[out][0].op_type != "Log" \
            or by_input[out][0].domain not in ("", "ai.onnx"):
        return None
    log = by_input[out][0]
    return Node("LogSigmoid", "pnnx", node.name, node.key, [node.inputs[0]], list(log.outputs), {}), log
