"""Lower a pnnx Graph to an ONNX model and write it atomically."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import onnx
from onnx import helper

from ...errors import ConversionError, UnsupportedOperator
from ...ir import Graph
from . import writer
from .builder import OnnxBuilder, Payload
from .lower import lower_graph

# onnxruntime 1.31 loads opsets up to 26; 23 has every operator lowered here
# (Attention, RMSNormalization, GroupNormalization-21, Gelu-20) with CPU kernels.
DEFAULT_OPSET = 23
MIN_OPSET = 21   # GroupNormalization with per-channel scale
_FUNCTIONS_IR_VERSION = 8  # model-local functions (moduleop bodies)
COMPLEX_INPUTS = "pnnx.complex_inputs"    # metadata keys, see _mark_complex
COMPLEX_OUTPUTS = "pnnx.complex_outputs"


def _checker_refusal(graph: Graph, message: str) -> UnsupportedOperator:
    """The lowered model fails the ONNX checker: a bug of this emitter, but the ONNX file's
    alone; no pnnx.onnx is written and the other emitters still write theirs."""
    # the checker names a node `<operator name>/<ONNX op>` (builder.py names them so)
    node = re.search(r"node name: ([^)/]+)", message)
    op = next((op for op in graph.ops if node and op.name == node.group(1)), None)
    return UnsupportedOperator.gathered([(op.type if op else "pnnx.onnx", op.name if op else "the model",
                                          f"the lowered ONNX model fails the checker: {message}")], target="ONNX")


@dataclass
class Lowered:
    """A lowered graph: the ModelProto without the data of its large weights (a skeleton) and
    that data, by initializer name (builder.Payload)."""
    model: onnx.ModelProto
    payloads: dict[str, Payload]


def lower_model(graph: Graph, fp16: bool = True, opset: int | None = None) -> Lowered:
    """The ONNX model for `graph`, its large weights left out (views of the graph's weights:
    nothing is copied). `graph` is not modified."""
    opset = DEFAULT_OPSET if opset is None else int(opset)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ConversionError(f"ONNX opset {opset} is not supported; choose {MIN_OPSET}.."
                              f"{onnx.defs.onnx_opset_version()}")
    ctx = OnnxBuilder(graph, opset, fp16)
    problems = lower_graph(ctx, graph)
    if problems:
        raise UnsupportedOperator.gathered(problems, target="ONNX")
    return Lowered(_model(ctx, graph, opset), ctx.payloads)


def build_model(graph: Graph, fp16: bool = True, opset: int | None = None) -> onnx.ModelProto:
    """The whole ONNX model for `graph`, every weight inside (not written, not checked)."""
    lowered = lower_model(graph, fp16, opset)
    for tensor in lowered.model.graph.initializer:
        if tensor.name in lowered.payloads:
            tensor.raw_data = lowered.payloads[tensor.name].tobytes()
    return lowered.model


def _model(ctx: OnnxBuilder, graph: Graph, opset: int) -> onnx.ModelProto:
    g = helper.make_graph(ctx.nodes, "pnnx", ctx.inputs, ctx.outputs, ctx.initializers)
    opsets = [helper.make_opsetid("", opset)]
    ir_version = helper.find_min_ir_version_for(opsets)
    opsets += [helper.make_opsetid(d, v) for d, v in sorted(ctx.domains.items())]
    if ctx.functions:
        ir_version = max(ir_version, _FUNCTIONS_IR_VERSION)
    model = helper.make_model(g, opset_imports=opsets, producer_name="pnnx_reference",
                              ir_version=ir_version, functions=ctx.functions)
    _mark_complex(model, ctx)
    return model


def _mark_complex(model: onnx.ModelProto, ctx: OnnxBuilder) -> None:
    """Name the complex graph inputs/outputs (real tensors with a trailing axis of 2) in the
    metadata, so that a runtime can view them as complex: COMPLEX_INPUTS / COMPLEX_OUTPUTS,
    comma-separated positions."""
    for key, values in ((COMPLEX_INPUTS, ctx.inputs), (COMPLEX_OUTPUTS, ctx.outputs)):
        positions = [str(i) for i, v in enumerate(values) if v.name in ctx.complex_values]
        if positions:
            helper.set_model_props(model, {**{p.key: p.value for p in model.metadata_props},
                                           key: ",".join(positions)})


def write_onnx(graph: Graph, path, fp16: bool = True, opset: int | None = None,
               external_over: int = writer.PROTOBUF_LIMIT) -> writer.Written:
    """Write `graph` as a checked ONNX model to `path` (atomically; nothing on failure), one
    weight at a time. A model of more than `external_over` bytes (by default protobuf's
    2 GiB limit, past which one file cannot be read) keeps its large weights in
    `writer.data_path(path)` beside it (ONNX external data). Returns the files written.

    fp16=True stores float weights as float16 initializers followed by a Cast back to the
    compute dtype: the file is about half the size, inputs and outputs stay float32.
    Raises UnsupportedOperator naming every operator that has no
    ONNX form, or the checker's refusal (one too) if the result does not pass the ONNX checker (path-based,
    full check): before anything is written, the model with its large weights as external
    data in a sparse placeholder file (the checker reads no weight's values, only the small
    tensors inline, which shape inference may use); with external data, the written files
    again."""
    lowered = lower_model(graph, fp16=fp16, opset=opset)
    with writer.placeholder(lowered.model, lowered.payloads) as skeleton:
        _check(skeleton, graph)
    try:
        written = writer.write(lowered.model, lowered.payloads, path, external_over)
    except OSError as err:
        raise ConversionError(f"{path}: cannot write: {err.strerror or err}") from None
    if written.data is not None:
        try:
            _check(os.fspath(written.model), graph)
        except UnsupportedOperator:
            for file in (written.model, written.data):
                file.unlink(missing_ok=True)
            raise
    return written


def _check(model, graph: Graph) -> None:
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise _checker_refusal(graph, first) from err
