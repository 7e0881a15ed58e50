"""The ONNX frontend: `load(model, input_shapes)` rebuilds an ONNX model (a file, with its
external data, or a `ModelProto`) as an `nn.Module` whose forward replays every node through
the PyTorch Python API (`module.py`, one rule per op type in `rules/`), with example inputs.
`api.export_onnx` then captures it like any Python model: the tracer, the passes and the
emitters are the Python door's own.

Inputs whose dims are symbolic (`dim_param`) are traced at a second shape (inputshape2, or each
symbolic dim doubled) so those dims come out dynamic; shape arithmetic the exporter wrote
(`Shape -> Gather -> Concat -> Reshape`) becomes size expressions, folded to constants where the
shape is known."""
from __future__ import annotations

from dataclasses import dataclass

from .inputs import InputSpec, check_types, example_inputs, graph_inputs, resolve_shapes, second_shapes
from .module import OnnxModule
from .reader import CERTIFIED_OPSETS, freeze_inputs, read_model
from .rules import RULES

__all__ = ["CERTIFIED_OPSETS", "Loaded", "OnnxModule", "RULES", "load"]


@dataclass
class Loaded:
    module: OnnxModule
    inputs: tuple                  # example inputs at inputshape
    inputs2: tuple | None          # at inputshape2 (given or chosen), None when all dims are fixed
    second_chosen: bool            # inputs2 was chosen here (a failed merge falls back to static)
    specs: list[InputSpec]
    what: str


def load(model, input_shapes=None, input_shapes2=None, *, inputs=None, input_types=None, constant_inputs=None,
         what: str | None = None) -> Loaded:
    """Read and rebuild `model`, then run it once untraced on example inputs (`inputs`, or
    seeded ones of `input_shapes`): every node no rule maps is refused in one ConversionError
    line before anything is written. `constant_inputs` ({input name: value}) turns graph inputs
    into constants, for graphs that read a shape, an axis or a count from an input."""
    proto, what = read_model(model, what=what)
    if constant_inputs:
        proto = freeze_inputs(proto, constant_inputs, what)
    specs = graph_inputs(proto, what)
    if inputs is not None:
        inputs = tuple(inputs)
        input_shapes = [list(t.shape) for t in inputs] if input_shapes is None else input_shapes
    check_types(specs, input_types, what)
    shapes = resolve_shapes(specs, input_shapes, what)
    if input_shapes2 is not None:
        shapes2 = resolve_shapes(specs, input_shapes2, what, "inputshape2")
    else:
        shapes2 = second_shapes(specs, shapes)
    module = OnnxModule(proto, what).eval()
    if inputs is None:
        inputs = example_inputs(specs, shapes)
    module.check(inputs)
    inputs2 = example_inputs(specs, shapes2) if shapes2 is not None else None
    return Loaded(module, inputs, inputs2, input_shapes2 is None and shapes2 is not None, specs, what)
