"""Lower a PNNX graph to ncnn: `<base>.ncnn.param`, `<base>.ncnn.bin` and `<base>_ncnn.py`.

    write_ncnn(graph, param_path, bin_path, py_path, fp16=True, input_shapes=None)

The graph is not modified. If any operator cannot be lowered, `UnsupportedOperator` names all
of them (type, name, why) and nothing is written."""
from __future__ import annotations

from ...ir import Graph
from . import ncnn_py
from .lower import lower_graph
from .writer import write_files


def write_ncnn(graph: Graph, param_path, bin_path, py_path, fp16: bool = True, input_shapes=None) -> None:
    work = graph.copy()
    lowered = lower_graph(work)
    operands = [op.outputs[0] for op in work.inputs()]
    shapes = input_shapes if input_shapes is not None else [x.shape or [] for x in operands]
    inputs = [ncnn_py.Feed(list(shape), x.dtype, lowered.fed_as_bits(x)) for shape, x in zip(shapes, operands)]
    write_files(lowered.layers, param_path, bin_path, py_path, fp16, inputs, lowered.input_axes,
                lowered.output_axes, [x.dtype for x in lowered.outputs])


__all__ = ["write_ncnn"]
