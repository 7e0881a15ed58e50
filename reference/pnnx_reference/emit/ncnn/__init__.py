"""Lower a PNNX graph to ncnn: `<base>.ncnn.param`, `<base>.ncnn.bin` and `<base>_ncnn.py`.

    write_ncnn(graph, param_path, bin_path, py_path, fp16=True, input_shapes=None)

The graph is not modified. If any operator cannot be lowered, `UnsupportedOperator` names all
of them (type, name, why) and nothing is written.

dtypes: ncnn blobs hold floats. A bool is carried as 0/1 and an integer as its float value (graph
inputs are fed so by `_ncnn.py`, except the indices Embed reads, fed as int32 bits); only the
lowerings registered as exact on them (`bool_operands`, `int_operands`) take them, the others
refuse. Where exactness depends on shapes the converter checks it (a sum or cumsum of bools is a
count: refused past 2^24); where it depends on values it cannot see, the limit is this: integer
results are exact while every intermediate magnitude stays below 2^24 in fp32 storage, and below
2048 with fp16 storage (ncnn's default where the CPU has it, Vulkan fp16), as for any count of
bools past 2048 there. Larger integers are rounded to the nearest float, not wrapped as torch's
integer overflow is."""
from __future__ import annotations

from ...ir import Graph
from . import ncnn_py
from .lower import lower_graph
from .writer import write_files


def write_ncnn(graph: Graph, param_path, bin_path, py_path, fp16: bool = True, input_shapes=None,
               fuse: bool = True) -> None:
    """fuse=False: hand-written arithmetic is lowered as written, not to the one ncnn layer of
    the same meaning (prepass.FUSIONS), to compare the two."""
    work = graph.copy()
    lowered = lower_graph(work, fuse)
    operands = [op.outputs[0] for op in work.inputs()]
    shapes = input_shapes if input_shapes is not None else [x.shape or [] for x in operands]
    inputs = [ncnn_py.Feed(list(shape), x.dtype, lowered.fed_as_bits(x)) for shape, x in zip(shapes, operands)]
    write_files(lowered.layers, param_path, bin_path, py_path, fp16, inputs, lowered.input_axes,
                lowered.output_axes, [x.dtype for x in lowered.outputs])


__all__ = ["write_ncnn"]
