"""The onnx package's reference evaluator (`onnx.reference.ReferenceEvaluator`), a pure
Python/numpy runtime of the ONNX operator specifications, running the suite's pnnx.onnx.

Written from docs/VENDOR.md alone, as a runtime vendor would."""
from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from pnnx_conformance.backends.base import Backend
from pnnx_conformance.backends.complex_io import as_complex, as_pairs, onnx_positions


class OnnxReferenceBackend(Backend):
    name = "onnx-reference"
    runtime = "onnx"                 # the distribution whose version the certificate records
    consumes = ("pnnx.onnx",)
    precisions = {"fp32": None}      # numpy in the model's own dtypes: fp32 in, fp32 out
    device = "cpu (numpy)"

    def prepare(self, artefacts, precision):
        self.model = onnx.load(str(artefacts.paths["pnnx.onnx"]))   # loading: a failure is a load failure

    def compile(self):
        self.evaluator = ReferenceEvaluator(self.model)             # building the kernels: a compile failure
        self.names = [i.name for i in self.model.graph.input]
        self.complex_in, self.complex_out = onnx_positions({p.key: p.value for p in self.model.metadata_props})

    def run(self, inputs):
        inputs = [as_pairs(x) if i in self.complex_in else x for i, x in enumerate(inputs)]
        outputs = self.evaluator.run(None, {n: np.array(x, order="C") for n, x in zip(self.names, inputs)})
        return [as_complex(np.asarray(y)) if i in self.complex_out else np.asarray(y) for i, y in enumerate(outputs)]

    def release(self):
        self.model = self.evaluator = None

    def describe(self):
        return {"name": self.name, "version": onnx.__version__, "device": self.device}
