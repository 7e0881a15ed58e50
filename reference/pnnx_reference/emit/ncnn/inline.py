"""Module operators (moduleop=) in ncnn: ncnn has no layer that holds a body, and a layer
named after the module class (what upstream writes) only loads where the user registers a
custom layer of that name. So an operator whose body was captured is replaced by a copy of
its body's operators, named `<operator>.<inner operator>` so the module stays visible in
ncnn.param; the body's weights are the operator's own. An operator read back from pnnx.param
has no body and stays unsupported. A body is captured as the module computes, without the
passes the main graph went through: its BatchNorms are folded into the convolution or linear
layer before them here, as the passes fold the main graph's (YOLOv5's Focus: conv, bn, silu)."""
from __future__ import annotations

from ...ir import Graph, Operand, Operator
from ...passes import fuse_batchnorm

BOUNDARY = ("pnnx.Input", "pnnx.Output")


def inline_module_bodies(graph: Graph) -> None:
    copies: list[Operator] = []
    while True:
        module_op = next((op for op in graph.ops if op.subgraph is not None), None)
        if module_op is None:
            break
        copies += _inline(graph, module_op)
    present = {id(op) for op in graph.ops}  # a nested module's copy was itself inlined
    fuse_batchnorm.run(graph, only=[op for op in copies if id(op) in present])


def _inline(graph: Graph, op: Operator) -> list[Operator]:
    """Replace `op` by copies of its body's operators; returns the copies."""
    body = op.subgraph
    mapped: dict[int, Operand] = {}
    body_inputs = [inner.outputs[0] for inner in body.inputs()]
    if len(body_inputs) != len(op.inputs):
        raise ValueError(f"module operator {op.name}: its body takes {len(body_inputs)} inputs, "
                         f"the operator has {len(op.inputs)}")
    for inner_operand, outer_operand in zip(body_inputs, op.inputs):
        mapped[id(inner_operand)] = outer_operand
    copies = [_copy_operator(graph, op, inner, mapped) for inner in body.ops if inner.type not in BOUNDARY]
    body_outputs = [operand for out_op in body.outputs() for operand in out_op.inputs]
    for inner_operand, outer_operand in zip(body_outputs, op.outputs):
        graph.replace_uses(outer_operand, mapped[id(inner_operand)])
    graph.remove_operator(op)
    return copies


def _copy_operator(graph: Graph, owner: Operator, inner: Operator, mapped: dict[int, Operand]) -> Operator:
    copy = graph.new_operator(inner.type, f"{owner.name}.{inner.name}", before=owner)
    copy.params = dict(inner.params)
    copy.attrs = dict(inner.attrs)
    copy.inputnames = list(inner.inputnames)
    copy.subgraph = inner.subgraph
    outputs = [graph.new_operand(f"{owner.name}.{o.name}", o.shape, o.dtype) for o in inner.outputs]
    mapped.update((id(o), new) for o, new in zip(inner.outputs, outputs))
    graph.connect(copy, [mapped[id(i)] for i in inner.inputs], outputs)
    return copy
