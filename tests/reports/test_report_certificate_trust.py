"""Certificates that can be trusted (issue 20, item 4; issue 28, item 1): signed with
Ed25519; a forged one (edited, digest recomputed), an inconsistent one, one naming cases the
suite does not have, one signed by another key or by none, and a signed one without a pinned
key are rejected; `--rerun` re-runs a random sample with the backend the user names and
catches a backend whose behaviour changed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from certificates import MALLORY, VENDOR, certificate as make, fp as _fp, rec

from pnnx_conformance.report.certificate import (case_set_problems, content_problems, digest_of, sign_certificate,
                                                 trust_problems)
from pnnx_conformance.certify import trusted_fingerprints

ROOT = Path(__file__).resolve().parents[2]
CASES = ["nn.ReLU/a", "nn.ReLU/b", "nn.Conv2d/a"]


def certificate(key=VENDOR) -> dict:
    results = [rec("nn.ReLU/a", "pass"), rec("nn.ReLU/b", "xfail", waiver="known bug"),
               rec("nn.Conv2d/a", "fail-numeric")]
    return make(results, key=key)


def result_of(cert, case) -> dict:
    return next(r for r in cert["results"] if r["case"] == case)


def verify(cert, trusted=(VENDOR,), allow_unsigned=False):
    return (trust_problems(cert, [_fp(k) for k in trusted], allow_unsigned) + content_problems(cert)
            + case_set_problems(cert, "abc", CASES))


def test_a_signed_certificate_verifies_and_names_its_signer():
    cert = certificate()
    assert cert["signature"]["fingerprint"] == _fp(VENDOR)
    assert verify(cert) == []
    assert verify(cert, trusted=()) == [f"signed by {_fp(VENDOR)}, but no key is trusted: pass --trust "
                                        f"{_fp(VENDOR)} or --pubkey FILE.pem if you trust this signer"]


def test_a_forged_certificate_edited_and_rehashed_is_rejected():
    cert = certificate()
    result_of(cert, "nn.Conv2d/a")["status"] = "pass"
    cert["summary"]["fp32"].update(passed=2, failed=0, pass_rate=0.666667)
    cert["summary"]["fp32"]["tables"]["nn"].update(passed=2, failed=0, pass_rate=0.666667)
    cert["digest"] = digest_of(cert)  # everything consistent again, except the signature
    assert verify(cert) == ["bad signature: the certificate was changed after it was signed"]


def test_a_forgery_resigned_with_another_key_fails_once_the_signer_is_pinned():
    cert = certificate()
    result_of(cert, "nn.Conv2d/a")["status"] = "pass"
    cert["summary"]["fp32"].update(passed=2, failed=0, pass_rate=0.666667)
    cert["summary"]["fp32"]["tables"]["nn"].update(passed=2, failed=0, pass_rate=0.666667)
    sign_certificate(cert, MALLORY)  # self-consistent: only pinning the issuer tells
    assert verify(cert, trusted=(MALLORY,)) == []
    assert verify(cert) == [f"signed by {_fp(MALLORY)}, which is not one of the trusted keys"]


def test_swapping_in_another_public_key_without_resigning_is_rejected():
    cert = certificate()
    other = certificate(MALLORY)["signature"]
    cert["signature"]["public_key"], cert["signature"]["fingerprint"] = other["public_key"], other["fingerprint"]
    cert["digest"] = digest_of(cert)
    assert verify(cert, trusted=(MALLORY,)) == ["bad signature: the certificate was changed after it was signed"]


def test_an_inconsistent_certificate_is_rejected_even_when_signed():
    cert = certificate()
    cert["summary"]["fp32"].update(passed=3, failed=0, waived=0, pass_rate=1.0)     # rates that lie
    cert["waivers"] = []                                                          # and a hidden waiver
    cert["results"].append(dict(result_of(cert, "nn.ReLU/a")))                     # and a duplicate
    del cert["signature"]
    sign_certificate(cert, VENDOR)  # the issuer's own key: the lie is in the content, not the transport
    assert verify(cert) == ["1 result(s) recorded twice, e.g. nn.ReLU/a (fp32)",
                            "the summary disagrees with the per-case results (precision fp32)",
                            "the waiver list disagrees with the per-case results"]


def test_a_certificate_naming_unknown_cases_or_missing_some_is_rejected():
    cert = certificate()
    result_of(cert, "nn.ReLU/a")["case"] = "nn.ReLU/ghost"
    sign_certificate(cert, VENDOR)
    assert verify(cert) == ["1 result(s) name a case that is not in the case set, e.g. nn.ReLU/ghost",
                            "1 case(s) of the case set have no result, e.g. nn.ReLU/a"]


def test_a_mode_left_out_of_some_case_is_rejected():
    cert = make([rec("nn.ReLU/a", "pass"), rec("nn.ReLU/a", "pass", "fp16"), rec("nn.ReLU/b", "pass")],
                modes={"fp32": None, "fp16": "fp16"})
    assert content_problems(cert) == ["1 case(s) lack a result in some declared precision mode, e.g. nn.ReLU/b"]


def test_unsigned_certificates_are_rejected_unless_allowed():
    unsigned = certificate(key=None)
    assert verify(unsigned, trusted=()) == ["not signed: anyone who edits it can recompute its digest "
                                            "(issue it with certify --key KEY.pem)"]
    assert verify(unsigned, trusted=(), allow_unsigned=True) == []
    assert verify(unsigned, allow_unsigned=True) == ["not signed, but a trusted signer was required"]


def test_pubkey_files_pin_their_fingerprint(tmp_path):
    from pnnx_conformance.certify import keygen

    private, public, fp = keygen(tmp_path / "k.pem")
    assert trusted_fingerprints(["sha256:ab"], [public, private]) == ["sha256:ab", fp, fp]


# --- the audit, through the command line -------------------------------------------------
def _cli(*args, cwd, drift=False):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tests" / "harness"),
                                                       os.environ.get("PYTHONPATH", "")]))
    env.pop("PNNX_TEST_DRIFT", None)
    if drift:
        env["PNNX_TEST_DRIFT"] = "1"
    return subprocess.run([sys.executable, "-m", "pnnx_conformance.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=500)


@pytest.mark.slow
def test_rerun_catches_a_backend_whose_behaviour_changed(tmp_path):
    assert _cli("keygen", "--out", str(tmp_path / "k.pem"), cwd=tmp_path).returncode == 0
    proc = _cli("certify", "--backend", "harness_fake_backends:DriftBackend", "--cases", "harness_cases:cases",
                "--op", "nn.Conv2d,F.relu", "--key", str(tmp_path / "k.pem"), "--out", str(tmp_path / "cert"),
                "-q", "--jobs", "1", cwd=tmp_path)  # one worker process each: a few small cases need no second
    assert proc.returncode == 0, proc.stderr[-3000:]
    js = next((tmp_path / "cert").glob("certificate-*.json"))
    assert {r["status"] for r in json.loads(js.read_text())["results"]} == {"pass"}
    pin = ["--pubkey", str(tmp_path / "k.pub.pem"), "--cases", "harness_cases:cases",
           "--backend", "harness_fake_backends:DriftBackend", "--jobs", "1"]
    same = _cli("verify-certificate", str(js), *pin, "--rerun", "2", "--seed", "7", "-q", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert "re-ran 2 case(s) drawn with --seed 7" in same.stderr and "verifies" in same.stderr
    changed = _cli("verify-certificate", str(js), *pin, "--rerun", "1", "--seed", "7", "-q", cwd=tmp_path,
                   drift=True)
    assert changed.returncode == 1
    assert "certified pass, now fail-numeric" in changed.stderr and "does NOT verify" in changed.stderr
