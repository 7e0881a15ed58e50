"""onnxruntime's CPU provider with every graph optimisation disabled: runs the pnnx.onnx
graph exactly as written, which is what a conformance run of the ONNX emitter wants."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort

from pnnx_conformance.backends.base import Backend


class OrtNoOptBackend(Backend):
    name = "onnxruntime-noopt"
    consumes = ("pnnx.onnx",)
    precisions = {"fp32": None}
    device = "cpu"

    def prepare(self, artefacts, precision):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(artefacts.paths["pnnx.onnx"]), opts,
                                            providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]

    def run(self, inputs):
        feeds = {n: np.ascontiguousarray(x) for n, x in zip(self.names, inputs)}
        return [np.asarray(o) for o in self.session.run(None, feeds)]

    def release(self):
        self.session = None

    def describe(self):
        return {"name": self.name, "version": ort.__version__, "device": "CPUExecutionProvider, ORT_DISABLE_ALL"}
