"""The zoo tier's published page (pnnx_model_zoo/page.py, reports/transformers.md): every model
of the tier has its rows whether or not the records hold it, failures and refusals come with
their reasons, and the committed page is what its committed records give."""
from __future__ import annotations

from pathlib import Path

from pnnx_conformance.results import Metrics, Result, write_results
from pnnx_model_zoo import page, run

REPORTS = Path(__file__).resolve().parents[2] / "reports"
TIER = run.select("transformers")


def _records(case):
    return [Result(case.id, case.op, "models", "reference", "convert", "pass"),
            Result(case.id, case.op, "models", "reference", "parity", "pass", "ncnn-cpu", "fp32",
                   metrics=Metrics(max_abs=3e-7)),
            Result(case.id, case.op, "models", "upstream", "parity", "fail-format", "ncnn-cpu", "fp32",
                   error="ncnn: param does not load")]


def test_a_model_without_records_keeps_its_rows_and_each_failure_its_reason():
    results = [r for case in TIER[1:] for r in _records(case)]
    text = page.page_markdown(TIER, results, "transformers")
    for case in TIER:
        rows = [line for line in text.splitlines() if line.startswith(f"| `{case.id}` |")]
        assert [row.split(" | ")[1] for row in rows] == ["Python API", "upstream .pt (pnnx)"]
    missing = [line for line in text.splitlines() if line.startswith(f"| `{TIER[0].id}` | Python API")]
    assert set(missing[0].strip("| ").split(" | ")[2:]) == {"·"}
    assert f"- `{TIER[1].id}` upstream .pt (pnnx), ncnn-cpu: fail-format: ncnn: param does not load" in text
    assert "✅ 3e-07" in text


def test_main_writes_the_page_and_its_records_and_check_finds_an_edit(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    write_results(tmp_path / "run" / run.RESULTS, [r for case in TIER for r in _records(case)])
    out = tmp_path / "reports" / "transformers.md"
    assert page.main(["--results", str(tmp_path / "run"), "--out", str(out)]) == 0
    assert page.compact_path(out).is_file()
    assert page.main(["--check", "--out", str(out)]) == 0
    out.write_text(out.read_text().replace("✅", "❌", 1))
    assert page.main(["--check", "--out", str(out)]) == 1
    assert "differs" in capsys.readouterr().err


def test_the_committed_page_covers_every_tier_model_and_is_what_its_records_give():
    committed = REPORTS / "transformers.md"
    assert page.check_page(TIER, committed, "transformers") == ""
    records = {r.case for r in page.read_back(committed)}
    text = committed.read_text()
    for case in TIER:
        assert case.id in records, f"{case.id}: not in the published run"
        assert f"| `{case.id}` | upstream .pt (pnnx) |" in text


def test_a_reason_the_harness_cut_short_is_taken_whole_from_the_traceback():
    whole = ("Load model from m.onnx failed:/onnxruntime_src/core/graph/model.cc:245 onnxruntime::Model::Model("
             "onnx::ModelProto&&, const onnxruntime::ModelOptions&) Missing opset in the model.")
    cut = Result("c", "models.c", "models", "upstream", "parity", "fail-runtime", "onnxruntime", "fp32",
                 error=f"Fail: {whole}"[:60], detail=f"Traceback (most recent call last):\n  ...\nmod.Fail: {whole}\n")
    assert page.reason(cut) == "Load model from m.onnx failed:Missing opset in the model."
    whole_line = Result("c", "models.c", "models", "reference", "convert", "not-supported",
                        error="unsupported: x", detail="Traceback\nUnsupportedOperator: unsupported: x\n")
    assert page.reason(whole_line) == "unsupported: x"


def test_the_checks_one_refusal_holds_for_share_one_reason_line():
    case = TIER[0]
    refused = [Result(case.id, case.op, "models", "reference-onnx", "parity", "not-supported", b, p,
                      error="unsupported: enable_gqa") for b, p in page.BACKENDS[:2]]
    text = page.page_markdown(TIER, refused, "transformers")
    assert text.count("unsupported: enable_gqa") == 1
    assert f"- `{case.id}` ONNX (pnnxref), pnnx-python, onnxruntime: not-supported: unsupported: enable_gqa" in text
