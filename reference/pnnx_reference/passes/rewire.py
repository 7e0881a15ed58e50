"""Small graph edits shared by the passes."""
from __future__ import annotations

from ..ir import Graph, Operand, Operator


def set_inputs(graph: Graph, op: Operator, inputs: list[Operand], inputnames: list[str] | None = None) -> None:
    for operand in op.inputs:
        if op in operand.consumers:
            operand.consumers.remove(op)
    op.inputs = []
    graph.connect(op, inputs=inputs)
    op.inputnames = list(inputnames) if inputnames and any(inputnames) else []


def bypass(graph: Graph, op: Operator, replacement: Operand) -> None:
    """Make the users of `op`'s single output read `replacement`, then delete `op`."""
    graph.replace_uses(op.outputs[0], replacement)
    graph.remove_operator(op)


def single_consumer(operand: Operand) -> Operator | None:
    return operand.consumers[0] if len(operand.consumers) == 1 else None


def static_shape(operand: Operand) -> bool:
    return operand.shape is not None and all(d >= 0 for d in operand.shape)
