"""Failure reasons a vendor can act on (issue 28, item 5): the line of an error that names
the cause, a shape mismatch called one, and repro READMEs that say how to run the artefacts
the failing backend ran. The stages of real failures: test_harness_isolation.py."""
from __future__ import annotations

import numpy as np
import pytest

from pnnx_conformance.compare import compare
from pnnx_conformance.report.repro import readme_text
from pnnx_conformance.results import Result
from pnnx_conformance.stages import MARK, cause_line, last_marked
from pnnx_conformance.tolerances import Tolerance

from harness_fake_backends import CXX_ERROR


@pytest.mark.parametrize("text, line", [
    ("RuntimeError: " + CXX_ERROR, "RuntimeError: DFT: signal dimension 3 is not supported"),
    ("ValueError: kernel missing", "ValueError: kernel missing"),
    ("RuntimeError: [ONNXRuntimeError] : 1 : FAIL : Load model failed\nmore",
     "RuntimeError: [ONNXRuntimeError] : 1 : FAIL : Load model failed"),
    ("RuntimeError: at /src/x.cpp:12:\n", "RuntimeError: at /src/x.cpp:12:"),   # nothing else: kept
    ("", ""),
])
def test_the_line_that_names_the_cause(text, line):
    assert cause_line(text) == line


def test_a_worker_s_last_mark_is_its_stage():
    assert last_marked(f"{MARK}convert\nconverting\n{MARK}load\n{MARK}run\nSegmentation fault\n") == "run"
    assert last_marked("no marks\n") == ""


def test_shape_and_count_mismatches_are_called_so_without_error_figures():
    tol = Tolerance(1e-4, 1e-4, "test")
    shape = compare([np.zeros((2, 3), np.float32)], [np.zeros((3, 2), np.float32)], tol)
    assert not shape.ok and shape.message == "shape mismatch: output 0 has shape [2, 3], the oracle's [3, 2]"
    assert (shape.metrics.max_abs, shape.metrics.cosine, shape.metrics.mismatch_pct) == (None, None, 100.0)
    count = compare([np.zeros(2)], [np.zeros(2), np.zeros(2)], tol)
    assert count.message == "output count mismatch: 1 outputs, the oracle has 2" and count.metrics.max_abs is None


def _result(backend):
    return Result(case="torch.fft.rfft/r1", op="torch.fft.rfft", table="torch", converter="reference", check="parity",
                  status="fail-runtime", backend=backend, precision="fp32", error="RuntimeError: DFT", stage="load")


def test_repro_readme_says_how_to_run_the_backend_s_own_artefacts():
    artefacts = {"pnnx.onnx": "case.pnnx.onnx", "ncnn.param": "case.ncnn.param", "ncnn.bin": "case.ncnn.bin"}
    onnx = readme_text(_result("openvino"), artefacts, False, ("pnnx.onnx",))
    assert "Stage: load." in onnx and "run the ONNX file case.pnnx.onnx in your runtime" in onnx
    assert "ncnn" not in onnx.split("Files:")[0] and "pnnx case/*.pt" not in onnx
    ncnn = readme_text(_result("ncnn-cpu"), artefacts, False, ("ncnn.param", "ncnn.bin"))
    assert "load case.ncnn.param and case.ncnn.bin with ncnn" in ncnn and "ONNX" not in ncnn
