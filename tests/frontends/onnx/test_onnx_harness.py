"""The harness with ONNX in it: the reference-onnx converter (an ONNX case as its own file, a
PyTorch case through torch.onnx.export, both converted by `pnnxref` in a fresh process), the
Python-API converter declaring ONNX cases not applicable, and the reports showing that as n/a."""
from collections import Counter

import pytest

from pnnx_conformance.report.matrix import cell_markdown, totals_markdown
from pnnx_conformance.report.summary import summarize
from pnnx_conformance.results import PASSING, STATUSES, Result
from pnnx_conformance.runner import RunOptions, run

# conversions in fresh processes; one worker takes the module (`--dist loadgroup`): one run for its tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("onnx_harness")]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx-harness")
    opts = RunOptions(out=out, tier="smoke", ops=["onnx.Conv", "nn.ReLU"], backends=["pnnx-python", "ncnn-cpu"],
                      converters=["reference", "reference-onnx"], jobs=1, progress=False)
    summary = run(opts)
    assert not summary.errors
    return summary.results


def statuses(results, case_prefix, converter):
    return Counter((r.check, r.backend or "", r.status) for r in results
                   if r.case.startswith(case_prefix) and r.converter == converter)


def test_reference_onnx_converts_an_onnx_case_from_its_own_file(results):
    got = statuses(results, "onnx.Conv/", "reference-onnx")
    assert got[("convert", "", "pass")] == 1 and got[("format", "", "pass")] == 1
    assert got[("parity", "pnnx-python", "pass")] == 1 and got[("parity", "ncnn-cpu", "pass")] == 2
    assert got[("roundtrip", "", "not-applicable")] == 1  # the oracle is onnxruntime, not bit-comparable


def test_reference_onnx_converts_a_pytorch_case_through_torch_onnx_export(results):
    got = statuses(results, "nn.ReLU/", "reference-onnx")
    cases = len({r.case for r in results if r.case.startswith("nn.ReLU/")})
    assert got[("convert", "", "pass")] == cases and got[("parity", "pnnx-python", "pass")] == cases


def test_the_python_api_converter_declares_onnx_cases_not_applicable(results):
    got = statuses(results, "onnx.Conv/", "reference")
    converter_checks = [k for k in got if k[1] != "torch"]  # the torch backend reruns the oracle itself
    assert converter_checks and all(status == "not-applicable" for _, _, status in converter_checks)
    error = next(r.error for r in results if r.case.startswith("onnx.Conv/") and r.converter == "reference"
                 and r.check == "convert")
    assert "not applicable: an ONNX model is not a PyTorch module" in error


def test_not_applicable_is_its_own_status_shown_as_n_a():
    assert "not-applicable" in STATUSES and "not-applicable" in PASSING
    rows = [Result(case="onnx.Relu/d", op="onnx.Relu", table="onnx", converter="reference", check="convert",
                   status="not-applicable"),
            Result(case="onnx.Relu/d", op="onnx.Relu", table="onnx", converter="reference-onnx", check="convert",
                   status="pass")]
    summary = summarize(rows)
    ref, onnx_route = summary.columns[0], summary.columns[1]
    assert ref.converter == "reference"
    cell = summary.cell("onnx.Relu", ref)
    assert cell.total == 0 and cell.not_applicable == 1 and cell_markdown(cell) == "n/a"
    assert cell_markdown(summary.cell("onnx.Relu", onnx_route)) == "✅ 1/1"
    assert "| onnx | n/a | 1/1 |" in totals_markdown(summary)
