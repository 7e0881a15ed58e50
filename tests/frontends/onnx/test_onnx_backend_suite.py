"""The ONNX backend test suite against our two ONNX `Backend`s, a few tests of it (the full run
is `python -m pnnx_conformance.onnx_backend`, committed as reports/onnx_backend_scores.md), and
the score report built from recorded outcomes."""
import json
import unittest

import onnx.backend.test
import pytest

from pnnx_conformance.onnx_backend import report
from pnnx_conformance.onnx_backend.__main__ import group_notes
from pnnx_conformance.onnx_backend.backends import PnnxNcnnOnnxBackend, PnnxPythonOnnxBackend

# one per family: weights, shapes read from an input (frozen at run time), resampling, recurrence
PYTHON_TESTS = ("test_relu_cpu", "test_conv_with_strides_padding_cpu", "test_gemm_default_matrix_bias_cpu",
                "test_reshape_extended_dims_cpu", "test_resize_upsample_scales_linear_cpu", "test_lstm_defaults_cpu",
                "test_averagepool_2d_pads_count_include_pad_cpu", "test_softmax_axis_1_cpu",
                "test_layer_normalization_2d_axis1_cpu", "test_expand_dim_changed_cpu")
NCNN_TESTS = ("test_relu_cpu", "test_add_cpu", "test_softmax_axis_1_cpu", "test_maxpool_2d_default_cpu",
              "test_globalaveragepool_cpu", "test_transpose_default_cpu")
pytestmark = [pytest.mark.slow,  # BackendTest generates every node test's data once per process (about 25 s)
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]  # from that generation
# the tests that run BackendTest: in one worker (tox.ini's --dist loadgroup), which generates that data once
SUITE = pytest.mark.xdist_group("onnx_backend_suite")


def run_backend_tests(backend, names) -> unittest.TestResult:
    suite = onnx.backend.test.BackendTest(backend, __name__)  # unmodified; only these tests are selected
    suite.include("^(" + "|".join(names) + ")$")
    tests = unittest.TestSuite()
    for case in suite.test_cases.values():
        for name in names:
            if hasattr(case, name):
                tests.addTest(case(name))
    result = unittest.TestResult()
    tests.run(result)
    assert result.testsRun == len(names)
    return result


def describe(result) -> str:
    return "; ".join(f"{test.id().split('.')[-1]}: {text.strip().splitlines()[-1]}"
                     for test, text in result.failures + result.errors)


@SUITE
def test_pnnx_python_backend_passes_its_smoke_tests():
    result = run_backend_tests(PnnxPythonOnnxBackend, PYTHON_TESTS)
    assert result.wasSuccessful(), describe(result)


@SUITE
def test_pnnx_ncnn_backend_passes_its_smoke_tests():
    result = run_backend_tests(PnnxNcnnOnnxBackend, NCNN_TESTS)
    assert result.wasSuccessful(), describe(result)


# the .pnnx.onnx writer once wrote files the ONNX checker refused: Celu in f16/bf16 and Einsum in bf16
# (types those operators take only at later opsets), and BitCast as a Reshape
WRITER_TESTS = ("test_celu_float16_cpu", "test_celu_bfloat16_cpu", "test_einsum_batch_matmul_bfloat16_cpu",
                "test_einsum_sum_bfloat16_cpu", "test_bitcast_float32_to_int32_cpu", "test_bitcast_bool_to_uint8_cpu")


@SUITE
def test_the_pnnx_onnx_writer_passes_the_checker_on_narrow_types_and_bitcasts():
    result = run_backend_tests(PnnxPythonOnnxBackend, WRITER_TESTS)
    assert result.wasSuccessful(), describe(result)


@SUITE
def test_an_unmapped_operator_is_a_failure_not_a_skip():
    result = run_backend_tests(PnnxPythonOnnxBackend, ("test_unique_not_sorted_without_axis_cpu",))
    assert not result.skipped and len(result.errors) + len(result.failures) == 1
    assert "Unique" in describe(result)


def test_backends_run_on_the_cpu_only():
    assert PnnxPythonOnnxBackend.supports_device("CPU") and not PnnxPythonOnnxBackend.supports_device("CUDA")


def outcomes(*rows):
    return {(g, t): {"group": g, "test": t, "outcome": o, "message": m, "seconds": 0.1} for g, t, o, m in rows}


def test_report_counts_cpu_tests_per_group_and_keeps_failures_as_failures(tmp_path):
    ort = outcomes(("node", "test_a_cpu", "passed", ""), ("node", "test_a_cuda", "skipped", "no CUDA"),
                   ("node", "test_b_cpu", "passed", ""), ("real", "test_r_cpu", "passed", ""))
    ours = outcomes(("node", "test_a_cpu", "passed", ""), ("node", "test_a_cuda", "skipped", "no CUDA"),
                    ("node", "test_b_cpu", "failed", "ConversionError: <ModelProto>: 1 ONNX node cannot be mapped"),
                    ("real", "test_r_cpu", "failed", "AssertionError: Not equal to tolerance rtol=0.001"))
    meta = {"backends": ["onnxruntime", "pnnx-python"], "jobs": 2, "wall_seconds": {"onnxruntime": 1, "pnnx-python": 2},
            "onnx": "1.x", "onnx_opset": 28, "onnxruntime": "1.y", "machine": "2 CPU cores", "notes": ["n"]}
    summary = report.summarize({"onnxruntime": ort, "pnnx-python": ours}, meta)
    assert summary["groups"]["node"]["onnxruntime"] == {"passed": 2}
    assert summary["groups"]["node"]["pnnx-python"] == {"passed": 1, "failed": 1}
    assert summary["tests"]["node/test_b"] == {"onnxruntime": "p", "pnnx-python": "f"}
    paths = report.write(summary, tmp_path)
    text = paths["markdown"].read_text()
    assert "| node | 2 / 2 (100.0%) | 1 / 2 (50.0%) |" in text
    assert "| **all** | **3 / 3 (100.0%)** | **1 / 3 (33.3%)** |" in text
    assert json.loads(paths["json"].read_text())["groups"]["real"]["pnnx-python"] == {"failed": 1}


def test_report_reads_the_worst_record_of_a_test(tmp_path):
    path = tmp_path / "r.jsonl"
    rows = [{"group": "node", "test": "t_cpu", "outcome": "passed", "message": "", "seconds": 1},
            {"group": "node", "test": "t_cpu", "outcome": "failed", "message": "teardown", "seconds": 0}]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    assert report.read_outcomes(path)[("node", "t_cpu")]["outcome"] == "failed"


def test_group_notes_say_what_is_on_disk():
    from onnx.backend.test.loader import DATA_DIR
    from pathlib import Path

    notes = " ".join(group_notes(Path(DATA_DIR)))
    assert "light" in notes and ("nothing was downloaded" in notes or "not run" in notes)


@pytest.mark.parametrize("message, expected", [
    ("ConversionError: /tmp/pnnx_x1/m.onnx: 3 ONNX nodes cannot be mapped", "ConversionError: <tmp>: N ONNX nodes"),
])
def test_failure_reasons_are_grouped_without_paths_and_numbers(message, expected):
    assert report._normalize(message).startswith(expected)


def test_a_test_missing_from_one_backend_counts_as_failed_there():
    both = outcomes(("node", "test_a_cpu", "passed", ""), ("node", "test_b_cpu", "passed", ""))
    crashed = outcomes(("node", "test_a_cpu", "passed", ""))
    meta = {"backends": ["pnnx-python", "pnnx-ncnn"]}
    summary = report.summarize({"pnnx-python": both, "pnnx-ncnn": crashed}, meta)
    assert summary["groups"]["node"]["pnnx-ncnn"] == {"passed": 1, "failed": 1}
    assert summary["failure_reasons"]["pnnx-ncnn"][0][0].startswith("no result recorded")


def test_the_real_row_says_it_runs_the_light_models(tmp_path):
    ours = outcomes(("real", "test_r_cpu", "passed", ""))
    meta = {"backends": ["pnnx-python"], "jobs": 1, "wall_seconds": {"pnnx-python": 1}, "onnx": "1.x",
            "onnx_opset": 28, "onnxruntime": "1.y", "machine": "2 CPU cores", "notes": ["n"]}
    text = report.markdown(report.summarize({"pnnx-python": ours}, meta))
    assert "| real = light (the 9 light models) | 1 / 1 (100.0%) |" in text


def test_report_only_rewrites_the_scores_from_recorded_outcomes(tmp_path):
    from pnnx_conformance.onnx_backend.__main__ import main

    work = tmp_path / "work"
    work.mkdir()
    (work / "pnnx-python.jsonl").write_text(json.dumps(
        {"group": "node", "test": "test_a_cpu", "outcome": "failed", "message": "x", "seconds": 1}) + "\n")
    (work / "pnnx-python.wall").write_text("14.0\n")
    assert main(["--backends", "pnnx-python", "--work", str(work), "--out", str(tmp_path), "--report-only"]) == 0
    text = (tmp_path / "onnx_backend_scores.md").read_text()
    assert "| node | 0 / 1 (0.0%) |" in text and "14 s" in text
    with pytest.raises(SystemExit, match="no outcomes recorded for onnxruntime"):
        main(["--backends", "onnxruntime", "--work", str(work), "--out", str(tmp_path), "--report-only"])
