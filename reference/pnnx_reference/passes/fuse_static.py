"""`F.linear` / `F.conv{1,2,3}d` whose weight (and bias) are constants become the `nn` module
with those constants as `@weight` / `@bias`, as upstream's fuse_static_* passes do.

The module is named as the generated `_pnnx.py` names its attribute (`F.linear_0` becomes
`F_linear_0`): a module operator's name is its attribute path, so converting the generated
code again finds the same name."""
from __future__ import annotations

import re

from ..ir import Graph, Operator
from .rewire import set_inputs

_CONV = {"F.conv1d": "nn.Conv1d", "F.conv2d": "nn.Conv2d", "F.conv3d": "nn.Conv3d"}


def _constant(op: Operator, name: str):
    """The Attribute of input `name`; None when absent, False when not a constant."""
    for operand, inputname in zip(op.inputs, op.inputnames):
        if inputname == name:
            producer = operand.producer
            if producer is None or producer.type != "pnnx.Attribute" or len(producer.attrs) != 1:
                return False
            return next(iter(producer.attrs.values()))
    return None


def _linear_params(op: Operator, weight, has_bias: bool) -> dict:
    return {"bias": has_bias, "in_features": weight.shape[1], "out_features": weight.shape[0]}


def _conv_params(op: Operator, weight, has_bias: bool) -> dict:
    groups = op.params.get("groups", 1)
    return {"bias": has_bias, "dilation": op.params.get("dilation", 1), "groups": groups,
            "in_channels": weight.shape[1] * groups, "kernel_size": list(weight.shape[2:]),
            "out_channels": weight.shape[0], "padding": op.params.get("padding", 0),
            "padding_mode": "zeros", "stride": op.params.get("stride", 1)}


def _attribute_name(graph: Graph, name: str) -> str:
    """`name` as a Python attribute name, unique in `graph`."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name)
    taken = {op.name for op in graph.ops if op.name != name}
    candidate, n = base, 1
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate


def _fusable(op: Operator):
    if op.type != "F.linear" and op.type not in _CONV:
        return None
    if not op.inputnames or op.inputnames[0] != "input" or len(op.outputs) != 1:
        return None
    if not set(op.inputnames) <= {"input", "weight", "bias"}:  # e.g. a stride from a shape
        return None
    weight, bias = _constant(op, "weight"), _constant(op, "bias")
    if not weight or bias is False or op.params.get("bias") is not None:
        return None
    dims = 2 if op.type == "F.linear" else int(op.type[-2]) + 2
    if len(weight.shape) != dims or not isinstance(op.params.get("groups", 1), int):
        return None
    return weight, bias


def _fuse(graph: Graph, op: Operator, weight, bias) -> None:
    params = (_linear_params if op.type == "F.linear" else _conv_params)(op, weight, bias is not None)
    op.type = "nn.Linear" if op.type == "F.linear" else _CONV[op.type]
    op.name = _attribute_name(graph, op.name)
    op.params = params
    op.attrs = {"weight": weight, **({"bias": bias} if bias is not None else {})}
    op.attrs = dict(sorted(op.attrs.items()))
    set_inputs(graph, op, [op.inputs[0]])


def run(graph: Graph, context=None) -> bool:
    changed = False
    for op in list(graph.ops):
        found = _fusable(op)
        if found is not None:
            _fuse(graph, op, *found)
            changed = True
    return changed
