"""The model of an ONNX-table case: an `nn.Module` that holds an ONNX graph's initializers as
its parameters and buffers (named as in the graph) and whose forward runs the graph with
onnxruntime, the oracle of these cases.

Why onnxruntime and not `onnx.reference.ReferenceEvaluator` (used only where onnxruntime
refuses the graph: batch-first recurrent layers): it is the runtime the users of an `.onnx` file
check their outputs against, its kernels are fp32 like the converters' (the
reference evaluator computes some ops in float64 and is slow on convolutions and recurrences),
and the unit tests cross-check it against the reference evaluator on every ONNX case, so the
oracle itself is held to the spec (`tests/frontends/onnx/test_onnx_cases_oracle.py`).

Being an nn.Module, the harness treats it like any case model: its weights are seeded from the
case id, pre-rounded to fp16 for the fp16 modes (the graph is rebuilt from the rounded
values), and the accumulation bound runs it on |weights| and |inputs|."""
from __future__ import annotations

import hashlib

import torch
import torch.nn as nn

ELEMENT_TYPES = {"f32": "FLOAT", "f64": "DOUBLE", "f16": "FLOAT16", "bf16": "BFLOAT16", "i8": "INT8",
                 "i16": "INT16", "i32": "INT32", "i64": "INT64", "u8": "UINT8", "bool": "BOOL"}
_SESSIONS: dict[str, object] = {}


class OnnxModel(nn.Module):
    """Subclasses set `opset`, `inputs` ([(name, dtype suffix, dims)], a str dim is a dim_param),
    `outputs` (names) and define `nodes()` (the graph's NodeProtos)."""

    opset: int = 13
    inputs: list = []
    outputs: list = ["y"]

    def nodes(self) -> list:
        raise NotImplementedError

    def initializers(self) -> dict[str, torch.Tensor]:
        return {**dict(self.named_parameters()), **dict(self.named_buffers())}

    def onnx_model(self):
        """The case's ModelProto, its initializers the module's current values."""
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        graph_inputs = [helper.make_tensor_value_info(name, getattr(TensorProto, ELEMENT_TYPES[dtype]), list(dims))
                        for name, dtype, dims in self.inputs]
        initializers = [numpy_helper.from_array(t.detach().cpu().numpy(), name)
                        for name, t in self.initializers().items()]
        graph = helper.make_graph(self.nodes(), "case", graph_inputs,
                                  [helper.make_empty_tensor_value_info(n) for n in self.outputs], initializers)
        opsets = [helper.make_opsetid("", self.opset)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="pnnx_op_cases",
                                  ir_version=helper.find_min_ir_version_for(opsets))
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        for value in model.graph.output:  # shape inference types what it can; function ops keep the input's
            if not value.type.HasField("tensor_type"):
                value.type.tensor_type.elem_type = graph_inputs[0].type.tensor_type.elem_type
        return model

    def forward(self, *xs):
        import numpy as np

        session = _session(self.onnx_model())
        feeds = {name: x.detach().cpu().numpy() for (name, _, _), x in zip(self.inputs, xs)}
        outputs = [torch.from_numpy(np.array(o, copy=True)) for o in session.run(None, feeds)]
        outputs = [o.to(torch.bool) if o.dtype == torch.bool else o for o in outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _session(model):
    """An onnxruntime session, or onnx's reference evaluator for the graphs onnxruntime does
    not run (its CPU recurrent kernels refuse layout=1, batch-first)."""
    import onnxruntime as ort

    data = model.SerializeToString()
    key = hashlib.sha256(data).hexdigest()
    if key not in _SESSIONS:
        if len(_SESSIONS) > 64:
            _SESSIONS.clear()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # kernels only, no fusions
        try:
            _SESSIONS[key] = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as err:
            if "layout == 1" not in str(err):
                raise
            from onnx.reference import ReferenceEvaluator

            _SESSIONS[key] = ReferenceEvaluator(model)
    return _SESSIONS[key]
