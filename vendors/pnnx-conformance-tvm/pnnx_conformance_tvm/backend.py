"""Apache TVM: the reference converter's pnnx.onnx imported into Relax (its ONNX frontend,
weights as constants), compiled for the generic `llvm` CPU target and run by the Relax VM on
one thread (TVM_NUM_THREADS=1, set before TVM's runtime starts its thread pool)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from pnnx_conformance.backends.base import Backend
from pnnx_conformance.backends.plugin_kit import (case_outputs, cause_line, complex_positions,
                                                  real_inputs, require, runtime_error)
from pnnx_conformance.errors import NotSupported

PIP = "apache-tvm==0.27.0.post1"
TARGET = "llvm"
# TVM's errors carry a C++ backtrace and Python frames before (or after) the message
NOISE = (r"^Traceback \(most recent call last\)", r"^\d+: ", r"^File \"", r"^at ", r"^\^+$", r"^During handling",
         r"^The above exception", r"^(tvm\.error\.)?\w+Error:\s*$", r"^Check failed: .*:\s*$")


def flatten(value) -> list:
    """The VM's result (one tensor or nested tuples of them) as a flat list, graph output order."""
    if hasattr(value, "numpy"):
        return [value]
    items = []
    for item in value:
        items += flatten(item)
    return items


class TvmLlvmBackend(Backend):
    name = "tvm-llvm"
    runtime = "apache-tvm"
    consumes = ("pnnx.onnx",)
    threads = 1
    precisions = {"fp32": None}
    device = f"cpu (target {TARGET})"

    def __init__(self) -> None:
        os.environ["TVM_NUM_THREADS"] = str(self.threads)
        self.tvm = require("tvm", PIP)
        self.vm = self.module = None

    def prepare(self, artefacts, precision):
        import onnx
        from tvm.relax.frontend.onnx import from_onnx

        path = Path(artefacts.paths["pnnx.onnx"])
        self.complex_inputs, self.complex_outputs = complex_positions(path)
        self.vm = None
        try:
            self.module = from_onnx(onnx.load(str(path)), keep_params_in_input=False)
        except self.tvm.error.OpNotImplemented as e:  # a clean refusal of an operator, not a failure
            raise NotSupported(f"unsupported: TVM's ONNX frontend: {cause_line(str(e), NOISE)}", str(e)) from None
        except Exception as e:
            raise runtime_error(e, NOISE) from None

    def compile(self):
        from tvm import relax

        try:
            executable = self.tvm.compile(self.module, target=TARGET)
        except Exception as e:
            raise runtime_error(e, NOISE) from None
        self.vm = relax.VirtualMachine(executable, self.tvm.cpu())

    def run(self, inputs):
        try:
            feeds = [self.tvm.runtime.tensor(x) for x in real_inputs(inputs, self.complex_inputs)]
            outputs = [np.array(t.numpy(), copy=True) for t in flatten(self.vm["main"](*feeds))]
        except Exception as e:
            raise runtime_error(e, NOISE) from None
        return case_outputs(outputs, self.complex_outputs)

    def release(self):
        self.vm = self.module = None

    def describe(self):
        return {"name": self.name, "version": self.tvm.__version__, "device": self.device,
                "precisions": {"fp32": "fp32 (the ONNX graph's own types)"}, "threads": self.threads}
