"""Certificates verify only while untouched; diffs list what changed between two runs."""
from __future__ import annotations

import json

from certificates import VENDOR, certificate, fp, rec

from pnnx_conformance.certify import write_certificate
from pnnx_conformance.report.certificate import case_set_hash, case_set_problems, content_problems, trust_problems
from pnnx_conformance.report.diff import diff_results
from pnnx_op_cases.case import Case, InputSpec


def results():
    return [rec("nn.ReLU/a", "pass"), rec("nn.ReLU/b", "xfail", waiver="known ncnn bug"),
            rec("nn.Conv2d/a", "fail-numeric"), rec("F.dropout/train", "skipped")]


def problems(cert, case_hash="abc"):
    return (trust_problems(cert, [fp(VENDOR)]) + content_problems(cert)
            + case_set_problems(cert, case_hash, {r["case"] for r in cert["results"]}))


def test_certificate_counts_cases_per_mode_waivers_as_waived_not_applicable_apart(tmp_path):
    cert = certificate(results())
    assert cert["summary"]["fp32"] == {
        "passed": 1, "waived": 1, "failed": 1, "not_applicable": 1, "total": 3, "pass_rate": 0.333333,
        "tables": {"F": {"passed": 0, "waived": 0, "failed": 0, "not_applicable": 1, "total": 0, "pass_rate": None},
                   "nn": {"passed": 1, "waived": 1, "failed": 1, "not_applicable": 0, "total": 3,
                          "pass_rate": 0.333333}}}
    assert cert["waivers"] == [{"case": "nn.ReLU/b", "precision": "fp32", "reason": "known ncnn bug"}]
    assert problems(cert) == []
    js, page = write_certificate(cert, tmp_path)
    assert problems(json.loads(js.read_text())) == []
    assert "vendor-x" in page.read_text() and not list(tmp_path.glob("*.part"))


def test_editing_one_result_breaks_verification():
    cert = certificate(results())
    cert["results"][0]["status"] = "pass" if cert["results"][0]["status"] != "pass" else "crash"
    assert problems(cert)[:2] == [
        "digest mismatch: the certificate was modified after it was issued",
        "bad signature: the certificate was changed after it was signed"]


def test_changed_case_set_is_reported():
    assert problems(certificate(results()), "def") == ["case set changed: certificate abc, current def"]


def test_case_set_hash_changes_with_any_case_source():
    a = Case("nn.ReLU/a", "nn.ReLU", "class Model: pass\n", (InputSpec((1, 2)),))
    b = Case("nn.ReLU/a", "nn.ReLU", "class Model: pass \n", (InputSpec((1, 2)),))
    assert case_set_hash([a]) != case_set_hash([b])
    assert case_set_hash([a]) == case_set_hash([a])


def test_diff_lists_newly_failing_and_passing():
    old = [rec("nn.ReLU/a", "pass"), rec("nn.ReLU/b", "fail-numeric"), rec("nn.Tanh/a", "pass")]
    new = [rec("nn.ReLU/a", "crash"), rec("nn.ReLU/b", "pass"), rec("nn.Sigmoid/a", "fail-runtime")]
    d = diff_results(old, new)
    assert [n.case for _, n in d.newly_failing] == ["nn.ReLU/a", "nn.Sigmoid/a"]
    assert [n.case for _, n in d.newly_passing] == ["nn.ReLU/b"]
    assert [m.case for m in d.missing] == ["nn.Tanh/a"]
    assert "  nn.ReLU/a [reference parity vendor-x fp32]: pass -> crash" in d.lines()
