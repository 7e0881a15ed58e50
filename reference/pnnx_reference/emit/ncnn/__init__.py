"""Lower a PNNX graph to ncnn: `<base>.ncnn.param`, `<base>.ncnn.bin` and `<base>_ncnn.py`.

    write_ncnn(graph, param_path, bin_path, py_path, fp16=True, input_shapes=None)

The graph is not modified. If any operator cannot be lowered, `UnsupportedOperator` names all
of them (type, name, why) and nothing is written."""
from __future__ import annotations

import copy

from ...ir import Graph, Operand, Operator
from .lower import lower_graph
from .writer import write_files


def write_ncnn(graph: Graph, param_path, bin_path, py_path, fp16: bool = True, input_shapes=None) -> None:
    work = copy_graph(graph)
    layers, ctx, outputs = lower_graph(work)
    inputs = [(list(op.outputs[0].shape or []), op.outputs[0].dtype) for op in work.inputs()]
    if input_shapes is not None:
        inputs = [(list(shape), dtype) for shape, (_, dtype) in zip(input_shapes, inputs)]
    output_ranks = [len(o.shape) if o.shape is not None else 2 for o in outputs]
    write_files(layers, param_path, bin_path, py_path, fp16, inputs, output_ranks, ctx.batchless)


def copy_graph(graph: Graph) -> Graph:
    """A structural copy (new operators and operands; weight attributes shared read-only).
    deepcopy would recurse along the producer/consumer chain and overflow on real networks."""
    new = Graph()
    operands: dict[int, Operand] = {}
    for old in graph.operands:
        operand = new.new_operand(old.name, old.shape, old.dtype)
        operand.params = copy.deepcopy(old.params)
        operands[id(old)] = operand
    for old in graph.ops:
        op = Operator(old.type, old.name, params=copy.deepcopy(old.params), attrs=dict(old.attrs),
                      inputnames=list(old.inputnames), subgraph=old.subgraph)
        new.ops.append(op)
        new.connect(op, [_mapped(operands, new, o) for o in old.inputs],
                    [_mapped(operands, new, o) for o in old.outputs])
    return new


def _mapped(operands: dict[int, Operand], graph: Graph, old: Operand) -> Operand:
    if id(old) not in operands:  # an operand the graph does not list
        operands[id(old)] = graph.new_operand(old.name, old.shape, old.dtype)
    return operands[id(old)]


__all__ = ["write_ncnn", "copy_graph"]
