"""Every failure gets a self-contained repro bundle, linked from its operator's HTML page."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pnnx_conformance.artefacts import Artefacts, keep_actual
from pnnx_conformance.oracle import Subject
from pnnx_conformance.report import build_reports
from pnnx_conformance.report.repro import bundle_dir, write_bundles
from pnnx_conformance.results import Metrics, Result, write_results
from pnnx_op_cases.registry import all_cases

CASE = "nn.ReLU/default"


class DoublingBackend:
    """Stands in for a runtime with a numeric bug (every output twice the input), whose outputs
    the worker kept; a bundle must never run it again."""
    precisions = {"fp32": None}

    def prepare(self, arts, precision):
        raise AssertionError("a repro bundle ran the backend again")

    run = prepare


def rec(status, check="parity", backend="vendor"):
    return Result(case=CASE, op="nn.ReLU", table="nn", converter="reference", check=check, status=status,
                  backend=backend if check == "parity" else None, precision="fp32" if check == "parity" else None,
                  metrics=Metrics(max_abs=1.0, atol=1e-5), error="max abs 1 > 1e-5")


def fake_workroot(tmp_path: Path, case) -> Path:
    workdir = tmp_path / "work" / case.safe_name / "reference"
    workdir.mkdir(parents=True)
    (workdir / "model.pnnx.param").write_text("7767517\n1 1\npnnx.Input in0 0 1 0\n")
    (workdir / "model.ncnn.param").write_text("7767517\n")
    Artefacts("reference", case.id, workdir, paths={"pnnx.param": workdir / "model.pnnx.param",
                                                     "ncnn.param": workdir / "model.ncnn.param"}).save()
    inputs = Subject(case).numpy_inputs
    keep_actual(workdir, "vendor", "fp32", [x * 2 for x in inputs])  # what the worker kept
    return tmp_path / "work"


def test_bundle_has_everything_to_reproduce(tmp_path):
    case = next(c for c in all_cases() if c.id == CASE)
    results = [rec("fail-numeric"), rec("pass", check="convert")]
    written = write_bundles(tmp_path / "res", results, {CASE: case}, workroot=fake_workroot(tmp_path, case),
                            backends={"vendor": DoublingBackend()}, environment={"os": "test"})
    assert len(written) == 1                          # passes get no bundle
    b = written[0]
    assert b == bundle_dir(tmp_path / "res", results[0]) and b.parent.name == "repro"
    names = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    assert {"model.pnnx.param", "model.ncnn.param", "result.json", "environment.json", "README.md",
            "inputs/0.npy", "expected/0.npy", "actual/0.npy", f"case/{case.safe_name}.py"} <= names
    inp, exp, act = (np.load(b / d / "0.npy") for d in ("inputs", "expected", "actual"))
    np.testing.assert_array_equal(exp, np.maximum(inp, 0))
    np.testing.assert_array_equal(act, inp * 2)
    assert json.loads((b / "result.json").read_text())["status"] == "fail-numeric"
    assert "without the conformance harness" in (b / "README.md").read_text()


def test_op_page_links_the_bundle(tmp_path):
    case = next(c for c in all_cases() if c.id == CASE)
    results = [rec("fail-runtime")]
    write_results(tmp_path / "res" / "results.jsonl", results)
    bundle = write_bundles(tmp_path / "res", results, {CASE: case})[0]
    assert not (bundle / "actual").exists()           # the backend produced nothing to keep
    written = build_reports(tmp_path / "res", tmp_path / "reports")
    page = (written["html"].parent / "ops" / "nn.ReLU.html").read_text()
    link = f"../../repro/{bundle.name}/README.md"
    assert link in page
    assert (written["html"].parent / "ops" / link).resolve() == (bundle / "README.md").resolve()


def test_op_page_shows_kept_pnnx_param(tmp_path):
    case = next(c for c in all_cases() if c.id == CASE)
    write_results(tmp_path / "res" / "results.jsonl", [rec("pass")])
    fake_workroot(tmp_path / "res", case)
    (tmp_path / "res" / "work").rename(tmp_path / "res" / "artefacts")   # run --keep-artefacts layout
    written = build_reports(tmp_path / "res", tmp_path / "reports")
    page = (written["html"].parent / "ops" / "nn.ReLU.html").read_text()
    assert "reference / model.pnnx.param" in page and "pnnx.Input in0 0 1 0" in page
