"""onnxruntime's CPU provider with every graph optimisation disabled: runs the pnnx.onnx
graph exactly as written, which is what a conformance run of the ONNX emitter wants.

It follows the backend contract (pnnx_conformance/backends/base.py): identified by `name`,
wraps the `runtime` distribution "onnxruntime" (a certificate records its version and this
package's), one thread, complex tensors through backends.complex_io."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort

from pnnx_conformance.backends.base import Backend
from pnnx_conformance.backends.complex_io import as_complex, as_pairs, onnx_positions


class OrtNoOptBackend(Backend):
    name = "onnxruntime-noopt"
    runtime = "onnxruntime"
    consumes = ("pnnx.onnx",)
    precisions = {"fp32": None}
    device = "cpu"

    def prepare(self, artefacts, precision):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = opts.inter_op_num_threads = self.threads
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(artefacts.paths["pnnx.onnx"]), opts,
                                            providers=["CPUExecutionProvider"])
        self.names = [i.name for i in self.session.get_inputs()]
        self.complex_in, self.complex_out = onnx_positions(self.session.get_modelmeta().custom_metadata_map)

    def run(self, inputs):
        inputs = [as_pairs(x) if i in self.complex_in else x for i, x in enumerate(inputs)]
        feeds = {n: np.array(x, order="C") for n, x in zip(self.names, inputs)}
        outputs = [np.asarray(o) for o in self.session.run(None, feeds)]
        return [as_complex(y) if i in self.complex_out else y for i, y in enumerate(outputs)]

    def release(self):
        self.session = None

    def describe(self):
        return {"name": self.name, "version": ort.__version__, "device": "CPUExecutionProvider, ORT_DISABLE_ALL"}
