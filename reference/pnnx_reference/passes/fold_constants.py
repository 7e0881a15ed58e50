"""Replace computations that do not depend on the graph inputs by their traced value
(`pnnx.Attribute pnnx_fold_<operand>`), and shape arithmetic over known (static) shapes by
a plain parameter (`Tensor.view ... shape=(1,-1)`)."""
from __future__ import annotations

import torch

from ..ir import Attribute, Graph, Operator
from .rewire import set_inputs, static_shape

# Values that change from run to run must stay operators.
_RANDOM = {"torch.rand", "torch.randn", "torch.randint", "torch.rand_like", "torch.randn_like",
           "torch.randint_like", "torch.randperm", "torch.normal", "torch.bernoulli",
           "torch.multinomial", "F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d",
           "F.alpha_dropout", "F.feature_alpha_dropout", "Tensor.uniform", "Tensor.normal"}


def _constant_ops(graph: Graph) -> set[int]:
    constant: set[int] = set()  # ids of operands known to be constant
    for op in graph.ops:
        if op.type in ("pnnx.Input", "pnnx.Output") or op.type in _RANDOM:
            continue
        if op.type == "pnnx.Attribute" or all(id(i) in constant for i in op.inputs):
            constant.update(id(o) for o in op.outputs)
    return constant


def _fold_tensors(graph: Graph, context) -> None:
    constant = _constant_ops(graph)
    for op in list(graph.ops):
        if op.type in ("pnnx.Attribute", "pnnx.Input", "pnnx.Output") or not op.outputs:
            continue
        if not all(id(o) in constant for o in op.outputs):
            continue
        values = [context.values.get(o) for o in op.outputs]
        if not all(isinstance(v, torch.Tensor) for v in values):
            continue
        for out, value in zip(list(op.outputs), values):
            if out.consumers:
                _replace_with_attribute(graph, op, out, value)


def _replace_with_attribute(graph: Graph, op: Operator, out, value) -> None:
    attr = graph.new_operator("pnnx.Attribute", f"pnnx_fold_{out.name}", before=op)
    attr.attrs["data"] = Attribute.from_torch(value)
    new = graph.new_operand(f"{out.name}_fold", out.shape, out.dtype)
    graph.connect(attr, outputs=[new])
    graph.replace_uses(out, new)


def _reads_static_shapes(op: Operator) -> bool:
    return op.type == "pnnx.Expression" and all(static_shape(i) for i in op.inputs)


def _fold_shape_inputs(graph: Graph, context) -> None:
    """An input fed by shape arithmetic over static shapes becomes a parameter."""
    for op in graph.ops:
        if not op.inputnames:
            continue
        keep = [(i, n) for i, n in zip(op.inputs, op.inputnames)]
        folded = False
        for operand, name in list(keep):
            value = context.values.get(operand)
            producer = operand.producer
            if isinstance(value, (int, list)) and producer is not None and _reads_static_shapes(producer):
                op.params[name] = value
                keep.remove((operand, name))
                folded = True
        if folded:
            op.params = dict(sorted(op.params.items()))
            set_inputs(graph, op, [i for i, _ in keep], [n for _, n in keep])


def run(graph: Graph, context) -> bool:
    _fold_shape_inputs(graph, context)
    _fold_tensors(graph, context)
    return True
