"""MNN: the reference converter's pnnx.onnx converted by MNN's converter to a .mnn model,
run by MNN's Python runtime (the Module API) on the CPU, one thread.

The converter is MNN's C++ converter (`_tools.mnnconvert`) called in a child process, not the
`mnnconvert` console script: that wrapper pip-installs a log client into whatever `pip` is on
PATH and uploads a record of each conversion. Precision "fp32" is MNN's PrecisionMode High.
MNN computes int64 and bool tensors as int32 (its converter rewrites the graph's types): int64
and bool inputs are fed as int32, and an int32 output the graph declares int64 or bool is read
back as that type (the values are MNN's; only their storage type changes).
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from pnnx_conformance.backends.base import Backend
from pnnx_conformance.errors import NotSupported
from pnnx_conformance.backends.plugin_kit import (case_outputs, cause_line, complex_positions,
                                                  real_inputs, require, runtime_error)

PIP = "mnn==3.6.1"
CONVERT_TIMEOUT_S = 120
UNSUPPORTED = "Not Support"  # the converter's words for an operator it has no conversion of
CONVERT = "import sys, _tools; sys.exit(_tools.mnnconvert(sys.argv))"
# MNN's converter reports its refusal on stdout with timestamps and source lines around it
NOISE = (r"^Start to ", r"^\[\d\d:\d\d:\d\d\] :\d+: ONNX Model (ir|opset) version", r"^Converted Failed!$",
         r"^The device supports", r"^MNN use ")
# numpy dtype -> (the dtype fed, the MNN expr dtype name its const() takes)
DTYPES = {"float32": (np.float32, "float"), "float64": (np.float64, "double"), "int32": (np.int32, "int"),
          "int64": (np.int32, "int"), "bool": (np.int32, "int"), "uint8": (np.uint8, "uint8"),
          "int8": (np.int8, "int8")}


def mnn_path(onnx_path: Path) -> Path:
    """Where the converted model of a pnnx.onnx goes: beside it, case.pnnx.onnx -> case.pnnx.mnn."""
    return Path(onnx_path).with_suffix(".mnn")


def convert_command(onnx_path: Path, out: Path) -> list[str]:
    return [sys.executable, "-c", CONVERT, "-f", "ONNX", "--modelFile", str(onnx_path), "--MNNModel", str(out),
            "--bizCode", "pnnx"]


def refusal(output: str) -> str:
    """The converter's reason for writing nothing: an unsupported-op line, else its last words."""
    for line in output.splitlines():
        if "not support" in line.lower() or "error" in line.lower():
            return re.sub(r"^(\[[\d:]+\])?\s*:\d+:\s*", "", line.strip())[:300]
    return cause_line(output, NOISE) or "the converter wrote no model"


def mnn_input(array: np.ndarray) -> tuple[np.ndarray, str]:
    """The array as MNN takes it, and the name of its MNN dtype."""
    if array.dtype.name not in DTYPES:
        raise TypeError(f"MNN takes no {array.dtype} input")
    kind, name = DTYPES[array.dtype.name]
    return np.ascontiguousarray(array, dtype=kind), name


def as_declared(output: np.ndarray, declared: np.dtype | None) -> np.ndarray:
    """MNN's int32 storage of an int64 or bool graph output, read as the declared type."""
    if declared is not None and output.dtype == np.int32 and declared in (np.int64, np.bool_):
        return output != 0 if declared == np.bool_ else output.astype(np.int64)
    return output


class MnnCpuBackend(Backend):
    name = "mnn-cpu"
    runtime = "mnn"
    consumes = ("pnnx.onnx",)
    threads = 1
    precisions = {"fp32": None}
    device = "CPU"

    def __init__(self) -> None:
        self.mnn = require("MNN", PIP)
        self.module = None

    def prepare(self, artefacts, precision):
        onnx_path = Path(artefacts.paths["pnnx.onnx"])
        self.complex_inputs, self.complex_outputs = complex_positions(onnx_path)
        self.input_names, self.output_names, self.output_types = _graph_names(onnx_path)
        self.module = None
        self.model = self.convert(onnx_path)

    def compile(self):
        nn, expr = self.mnn.nn, self.mnn.expr
        try:
            self.module = nn.load_module_from_file(
                str(self.model), self.input_names, self.output_names, shape_mutable=True, rearrange=True,
                backend=expr.Backend.CPU, precision_mode=expr.PrecisionMode.High, thread_num=self.threads)
        except Exception as e:
            raise runtime_error(e, NOISE) from None

    def convert(self, onnx_path: Path) -> Path:
        out = mnn_path(onnx_path)
        out.unlink(missing_ok=True)
        try:
            done = subprocess.run(convert_command(onnx_path, out), capture_output=True, text=True,
                                  timeout=CONVERT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"MNN's converter ran past {CONVERT_TIMEOUT_S} s") from None
        if not out.is_file() or out.stat().st_size == 0:
            output = done.stdout + done.stderr
            reason = refusal(output)
            if UNSUPPORTED in reason:  # a clean refusal of an operator, not a failure
                raise NotSupported(f"unsupported: MNN's converter: {reason}", output[-3000:])
            raise RuntimeError(f"MNN's converter wrote no model: {reason}\n{output[-3000:]}")
        return out

    def run(self, inputs):
        if len(inputs) != len(self.input_names):
            raise RuntimeError(f"model has {len(self.input_names)} inputs, case gives {len(inputs)}")
        expr = self.mnn.expr
        try:
            feeds = [expr.const(x, list(x.shape), expr.NCHW, getattr(expr, name))
                     for x, name in map(mnn_input, real_inputs(inputs, self.complex_inputs))]
            outputs = [as_declared(np.array(y.read(), copy=True), t)
                       for y, t in zip(self.module.forward(feeds), self.output_types)]
        except Exception as e:
            raise runtime_error(e, NOISE) from None
        return case_outputs(outputs, self.complex_outputs)

    def release(self):
        self.module = None

    def describe(self):
        return {"name": self.name, "version": self.mnn.version(), "device": self.device,
                "precisions": {"fp32": "PrecisionMode.High"}, "threads": self.threads}


def _graph_names(onnx_path: Path) -> tuple[list[str], list[str], list]:
    """The graph's input names, output names and output numpy types."""
    import onnx
    from onnx.helper import tensor_dtype_to_np_dtype

    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    initialisers = {t.name for t in graph.initializer}
    types = [o.type.tensor_type.elem_type for o in graph.output]
    return ([i.name for i in graph.input if i.name not in initialisers], [o.name for o in graph.output],
            [tensor_dtype_to_np_dtype(t) if t else None for t in types])
