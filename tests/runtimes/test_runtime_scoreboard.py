"""The runtime scoreboard (pnnx_conformance.runtimes) from made-up runs: totals count cases per
mode without n/a and skipped, whose bug each failure is, the pages, the history."""
from __future__ import annotations

import json

import pytest

from pnnx_conformance.errors import HarnessError
from pnnx_conformance.results import Metrics, Result, write_results
from pnnx_conformance.runtimes import board, collect, yardstick
from pnnx_conformance.runtimes.__main__ import main


def _record(case, precision, status, error="", backend="openvino-cpu", op=None, stage=""):
    return Result(case=case, op=op or case.split("/")[0], table=case.split(".")[0], converter="reference",
                  check="parity", status=status, backend=backend, precision=precision, error=error, stage=stage,
                  metrics=Metrics(atol=1e-4, rtol=1e-4) if status == "pass" else None)


RECORDS = [
    _record("nn.Conv2d/k3", "fp32", "pass"), _record("nn.Conv2d/k3", "default", "pass"),
    _record("torch.fft.rfft/r2", "fp32", "fail-numeric", "output 0: shape (4, 9, 1), the oracle has (4, 9)"),
    _record("torch.fft.rfft/r2", "default", "crash", "worker killed by SIGSEGV"),
    _record("torch.floor_divide/s", "fp32", "pass"),
    _record("torch.floor_divide/s", "default", "fail-numeric", "output 0: 1/192 elements out of tolerance"),
    _record("torch.cat/two", "fp32", "fail-runtime", "RuntimeError: bad file", stage="load"),
    _record("torch.cat/two", "default", "fail-runtime", "RuntimeError: bad file", stage="load"),
    _record("onnx.Relu/r4", "fp32", "not-applicable"), _record("onnx.Relu/r4", "default", "not-applicable"),
    _record("torch.rand/x", "fp32", "skipped"), _record("torch.rand/x", "default", "skipped"),
]
# onnxruntime on the same cases: rfft passes (the runtime's bug), cat fails too (the suite's)
VERDICTS = {"torch.fft.rfft/r2": {"status": "pass", "error": ""},
            "torch.floor_divide/s": {"status": "pass", "error": ""},
            "torch.cat/two": {"status": "fail-runtime", "error": "x"}}


def _run(tmp_path, records=RECORDS, commit="abc1234", finished="2026-11-28T12:00:00Z"):
    run = tmp_path / f"run-{commit}"
    write_results(run / "results.jsonl", records + [Result(case="nn.Conv2d/k3", op="nn.Conv2d", table="nn",
                                                           converter="reference", check="convert", status="pass")])
    (run / "run.json").write_text(json.dumps({"commit": commit, "tier": "smoke", "finished_utc": finished,
                                              "wall_s": 12.0, "jobs": 2}))
    (run / "environment.json").write_text(json.dumps({"backends": {"openvino-cpu": {
        "version": "2026.4.1", "precisions": {"fp32": "f32", "default": "bf16"}}}}))
    return run


def test_family_is_the_operators_own():
    assert board.family("nn.GRU") == "nn_rnn" and board.family("torch.fft.rfft") == "torch_fft"
    assert board.family("no.such_op") == "no"


def test_totals_count_cases_judged_per_mode():
    assert collect.mode_totals(RECORDS) == {"default": [1, 4], "fp32": [2, 4]}


def test_owner_of_each_failure():
    of = board.owners(RECORDS, VERDICTS)
    by_key = {(r.case, r.precision): of(r) for r in RECORDS if r.status not in yardstick.NOT_FAILED}
    assert by_key == {("torch.fft.rfft/r2", "fp32"): "runtime", ("torch.fft.rfft/r2", "default"): "runtime",
                      ("torch.floor_divide/s", "default"): "precision",
                      ("torch.cat/two", "fp32"): "suite", ("torch.cat/two", "default"): "suite"}
    assert board.runtime_wrong(RECORDS, VERDICTS) == {"default": ["torch.fft.rfft/r2"], "fp32": ["torch.fft.rfft/r2"]}
    assert board.runtime_wrong(RECORDS, {}) == {}  # nothing checked: nobody blamed
    assert yardstick.failing_cases({"b": RECORDS}) == ["torch.cat/two", "torch.fft.rfft/r2", "torch.floor_divide/s"]


def test_reasons_grouped_commonest_first_with_repro():
    found = board.reasons(RECORDS, VERDICTS)
    assert found[0]["reason"] == "load: RuntimeError: bad file" and found[0]["records"] == 2
    assert found[0]["owners"] == {"suite": 2} and found[0]["modes"] == ["default", "fp32"]
    assert "--pattern 'torch.cat/two'" in board.repro("openvino-cpu", "torch.cat/two")
    assert board.repro("mnn-cpu", "x").startswith("tox -e mnn -- pnnx-conformance run")


def test_collect_publish_and_check(tmp_path, monkeypatch):
    out = tmp_path / "reports"
    assert main(["collect", str(_run(tmp_path)), "--out", str(out)]) == 0
    kept = collect.load_runtime(out / "openvino-cpu")
    assert len(kept) == len(RECORDS) and {r.check for r in kept} == {"parity"}
    assert not list(out.rglob("results.jsonl.gz"))  # that name is a `report` folder's (matrix checked beside it)
    assert not list(out.rglob("run.json")) and (out / "openvino-cpu" / "run_info.json").is_file()  # nor report's
    monkeypatch.setattr(yardstick, "measure", lambda cases, tier="smoke": {c: VERDICTS[c] for c in cases})
    assert main(["yardstick", "--out", str(out)]) == 0
    assert json.loads((out / yardstick.FILE).read_text())["cases"] == VERDICTS
    assert main(["publish", "--out", str(out)]) == 0
    assert "None issued yet." in (out / board.MARKDOWN).read_text()
    (out / "vendor.pub.pem").write_text("key")
    (out / "openvino-cpu" / "certificate-openvino-cpu.json").write_text(json.dumps({
        "selection": {"tier": "smoke", "case_count": 6}, "signature": {"fingerprint": "sha256:ab"},
        "summary": {"fp32": {"passed": 2, "total": 4}, "default": {"passed": 1, "total": 4}}}))
    assert main(["publish", "--out", str(out)]) == 0
    md = (out / board.MARKDOWN).read_text()
    assert ("| `openvino-cpu` | `reports/runtimes/openvino-cpu/certificate-openvino-cpu.json` | smoke, 6 cases | "
            "default 1/4, fp32 2/4 | `sha256:ab` | `pnnx-conformance verify-certificate "
            "reports/runtimes/openvino-cpu/certificate-openvino-cpu.json --pubkey reports/runtimes/vendor.pub.pem` |") in md
    assert "| 1/4 (25.0%) | 1 | 1 |" in md and "| 2/4 (50.0%) | 1 | 1 |" in md
    assert "**openvino-cpu fp32**: 1 case(s): `torch.fft.rfft` (1)" in md
    assert "suite (onnxruntime fails the same case too)" in md and "reduced precision" in md
    assert "<svg class='trend'" in (out / board.HTML).read_text()
    assert main(["publish", "--out", str(out), "--check"]) == 0
    (out / board.MARKDOWN).write_text(md + "edited\n")
    assert main(["publish", "--out", str(out), "--check"]) == 1


def test_history_one_entry_per_commit_runtimes_merged(tmp_path):
    out = tmp_path / "reports"
    collect.collect(_run(tmp_path), out)
    mnn = [_record("nn.Conv2d/k3", "fp32", "pass", backend="mnn-cpu")]
    collect.collect(_run(tmp_path / "m", mnn), out)
    collect.collect(_run(tmp_path / "n", RECORDS[:2], commit="def5678", finished="2026-11-28T13:00:00Z"), out)
    entries = json.loads((out / collect.HISTORY).read_text())
    assert [e["commit"] for e in entries] == ["abc1234", "def5678"]
    assert entries[0]["totals"]["runtimes"] == {"mnn-cpu fp32": [1, 1], "openvino-cpu default": [1, 4],
                                               "openvino-cpu fp32": [2, 4]}
    assert entries[1]["totals"]["runtimes"] == {"openvino-cpu default": [1, 1], "openvino-cpu fp32": [1, 1]}


def test_collect_refuses_a_folder_without_one_runtime(tmp_path):
    with pytest.raises(HarnessError, match="found none"):
        collect.collect(tmp_path / "missing", tmp_path / "out")
    both = RECORDS[:1] + [_record("nn.Conv2d/k3", "fp32", "pass", backend="mnn-cpu")]
    with pytest.raises(HarnessError, match="mnn-cpu, openvino-cpu"):
        collect.collect(_run(tmp_path, both), tmp_path / "out")


def test_committed_scoreboard_is_what_its_committed_data_gives():
    from pathlib import Path

    published = Path(__file__).resolve().parents[2] / "reports" / "runtimes"
    assert board.publish(published, check=True) == [], \
        "reports/runtimes/scoreboard.* are stale: python -m pnnx_conformance.runtimes publish --out reports/runtimes"
