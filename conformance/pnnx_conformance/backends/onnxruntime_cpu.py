"""onnxruntime, CPU execution provider, default graph optimisations."""
from __future__ import annotations

import numpy as np

from .base import Backend


class OnnxRuntimeBackend(Backend):
    name = "onnxruntime"
    consumes = ("pnnx.onnx",)
    precisions = {"fp32": None}

    def session_options(self):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        return opts

    def prepare(self, artefacts, precision):
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(artefacts.paths["pnnx.onnx"]), self.session_options(),
                                            providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]

    def run(self, inputs):
        if len(inputs) != len(self.input_names):
            raise RuntimeError(f"model has {len(self.input_names)} inputs, case gives {len(inputs)}")
        feeds = {n: np.ascontiguousarray(x) for n, x in zip(self.input_names, inputs)}
        return [np.asarray(o) for o in self.session.run(None, feeds)]

    def release(self):
        self.session = None

    def describe(self):
        import onnxruntime as ort

        return {"name": self.name, "version": ort.__version__, "device": "CPUExecutionProvider"}
