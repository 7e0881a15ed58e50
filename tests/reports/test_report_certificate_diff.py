"""Certificates verify only while untouched; diffs list what changed between two runs."""
from __future__ import annotations

import json

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pnnx_conformance.report.certificate import (case_set_hash, make_certificate, verify_certificate,
                                                 write_certificate)
from pnnx_conformance.report.diff import diff_results
from pnnx_conformance.results import Metrics, Result
from pnnx_op_cases.case import Case, InputSpec

ENV = {"os": "test", "packages": {}}
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # a fixed test key: no randomness


def rec(case, status, backend="vendor-x", waiver=""):
    return Result(case=case, op=case.split("/")[0], table="nn", converter="reference", check="parity",
                  status=status, backend=backend, precision="fp32", metrics=Metrics(max_abs=0.0), waiver=waiver)


def results():
    return [rec("nn.ReLU/a", "pass"), rec("nn.ReLU/b", "xfail", waiver="known ncnn bug"),
            rec("nn.Conv2d/a", "fail-numeric"), rec("nn.Conv2d/a", "pass", backend="other")]


def test_certificate_counts_waivers_as_waived_not_passed(tmp_path):
    cert = make_certificate("vendor-x", results(), tier="smoke", case_hash="abc", environment=ENV, key=KEY)
    assert cert["pass_rates"]["nn"] == {"passed": 1, "waived": 1, "failed": 1, "total": 3, "pass_rate": 0.333333}
    assert cert["waivers"] == [{"case": "nn.ReLU/b", "reason": "known ncnn bug"}]
    assert verify_certificate(cert, "abc") == []
    js, page = write_certificate(cert, tmp_path)
    assert verify_certificate(json.loads(js.read_text()), "abc") == []
    assert "vendor-x" in page.read_text()


def test_editing_one_result_breaks_verification():
    cert = make_certificate("vendor-x", results(), tier="smoke", case_hash="abc", environment=ENV, key=KEY)
    cert["results"][0]["status"] = "pass" if cert["results"][0]["status"] != "pass" else "crash"
    assert verify_certificate(cert, "abc")[:2] == [
        "digest mismatch: the certificate was modified after it was issued",
        "bad signature: the certificate was changed after it was signed"]


def test_changed_case_set_is_reported():
    cert = make_certificate("vendor-x", results(), tier="smoke", case_hash="abc", environment=ENV, key=KEY)
    assert verify_certificate(cert, "def") == ["case set changed: certificate abc, current def"]


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
