"""Lower a PNNX graph to ncnn: `<base>.ncnn.param`, `<base>.ncnn.bin` and `<base>_ncnn.py`.

    write_ncnn(graph, param_path, bin_path, py_path, fp16=True, input_shapes=None)

The graph is not modified. If any operator cannot be lowered, `UnsupportedOperator` names all
of them (type, name, why) and nothing is written."""
from __future__ import annotations

from ...ir import Graph
from .lower import lower_graph
from .writer import write_files


def write_ncnn(graph: Graph, param_path, bin_path, py_path, fp16: bool = True, input_shapes=None) -> None:
    work = graph.copy()
    lowered = lower_graph(work)
    inputs = [(list(op.outputs[0].shape or []), op.outputs[0].dtype) for op in work.inputs()]
    if input_shapes is not None:
        inputs = [(list(shape), dtype) for shape, (_, dtype) in zip(input_shapes, inputs)]
    write_files(lowered.layers, param_path, bin_path, py_path, fp16, inputs, lowered.input_axes,
                lowered.output_axes)


__all__ = ["write_ncnn"]
