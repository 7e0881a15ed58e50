"""onnxruntime, CPU execution provider, default graph optimisations."""
from __future__ import annotations

import numpy as np

from .base import Backend
from .complex_io import as_complex, as_pairs, onnx_positions


class OnnxRuntimeBackend(Backend):
    name = "onnxruntime"
    consumes = ("pnnx.onnx",)
    precisions = {"fp32": None}
    runtime = "onnxruntime"

    def session_options(self):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = self.threads
        opts.log_severity_level = 3
        return opts

    def prepare(self, artefacts, precision):
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(artefacts.paths["pnnx.onnx"]), self.session_options(),
                                            providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        self.complex_inputs, self.complex_outputs = onnx_positions(self.session.get_modelmeta().custom_metadata_map)

    def run(self, inputs):
        if len(inputs) != len(self.input_names):
            raise RuntimeError(f"model has {len(self.input_names)} inputs, case gives {len(inputs)}")
        inputs = [as_pairs(x) if i in self.complex_inputs else x for i, x in enumerate(inputs)]
        feeds = {n: np.array(x, order="C") for n, x in zip(self.input_names, inputs)}  # keeps 0-d as 0-d
        outputs = [np.asarray(o) for o in self.session.run(None, feeds)]
        return [as_complex(o) if i in self.complex_outputs else o for i, o in enumerate(outputs)]

    def release(self):
        self.session = None

    def describe(self):
        import onnxruntime as ort

        return {"name": self.name, "version": ort.__version__, "device": "CPUExecutionProvider"}

