"""A corpus of hostile certificates (issue 28, item 1): verify-certificate refuses each with
one line naming the file, a non-zero exit and no traceback, and never imports or runs what a
certificate names (a case provider, a backend) unless its signature verifies against a key
the user trusts and the user names the same one on the command line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from certificates import MALLORY, VENDOR, certificate, fp as _fp, public_pem as _pub_pem, rec
from pnnx_conformance.cli import main
from pnnx_conformance.report import certificate_schema
from pnnx_conformance.report.certificate import case_set_hash, digest_of, sign_certificate
from pnnx_conformance.certify import SUITE

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "harness"
PROVIDER = "harness_cases:cases"
# a module that leaves a file behind when imported: it must never be imported
EVIL = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\ndef cases():\n    return []\n"


@pytest.fixture
def harness_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HARNESS))


def build(key=VENDOR, provider=PROVIDER, name="drift", plugin=None, runtime=None, status="pass") -> dict:
    """A certificate of one harness case (F.relu/r4), consistent with harness_cases today."""
    sys.path.insert(0, str(HARNESS))
    try:
        from harness_cases import cases
    finally:
        sys.path.remove(str(HARNESS))
    chosen = [c for c in cases() if c.op == "F.relu"]
    return certificate([rec("F.relu/r4", status, backend=name)], key=key, name=name, provider=provider,
                       ops=["F.relu"], case_hash=case_set_hash(chosen), plugin=plugin, runtime=runtime)


def write(tmp_path, cert, name="cert.json") -> Path:
    path = tmp_path / name
    path.write_text(cert if isinstance(cert, str) else json.dumps(cert))
    return path


def verify(capsys, path, *args):
    rc = main(["verify-certificate", str(path), *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


def test_a_good_certificate_verifies_only_against_a_trusted_key(tmp_path, capsys, harness_path):
    path = write(tmp_path, build())
    assert verify(capsys, path, "--trust", _fp(VENDOR), "--cases", PROVIDER)[0] == 0
    rc, err = verify(capsys, path, "--cases", PROVIDER)
    assert rc == 1 and "no key is trusted" in err and "(no key pinned)" in err


def test_pubkey_of_another_signer_is_never_called_trusted(tmp_path, capsys):
    path = write(tmp_path, build())
    rc, err = verify(capsys, path, "--pubkey", str(_pub_pem(MALLORY, tmp_path / "other.pub.pem")), "--no-case-check")
    assert rc == 1 and "(trusted)" not in err
    assert f"signed by {_fp(VENDOR)}, which is not one of the trusted keys" in err


@pytest.mark.parametrize("signed_by", ["vendor", "mallory"])
def test_a_provider_named_in_the_file_is_never_imported(tmp_path, capsys, monkeypatch, signed_by):
    """Neither with the right signer (the user did not name the provider) nor, when the user
    names the same provider, with a signer the user does not trust."""
    marker = tmp_path / "imported.txt"
    (tmp_path / "evil_cases.py").write_text(EVIL.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write(tmp_path, build(VENDOR if signed_by == "vendor" else MALLORY, provider="evil_cases:cases"))
    extra = [] if signed_by == "vendor" else ["--cases", "evil_cases:cases"]
    rc, err = verify(capsys, path, "--trust", _fp(VENDOR), *extra)
    assert rc == 1 and not marker.exists() and "evil_cases" not in sys.modules
    assert ("pass --cases evil_cases:cases" in err) == (signed_by == "vendor")


def test_a_provider_given_on_the_command_line_must_be_the_certificate_s(tmp_path, capsys, harness_path):
    path = write(tmp_path, build(provider=None))
    rc, err = verify(capsys, path, "--trust", _fp(VENDOR), "--cases", PROVIDER)
    assert rc == 1 and "covers the suite's own cases, not --cases harness_cases:cases" in err


def test_os_abort_as_provider_or_backend_leaves_the_verifier_alive(tmp_path):
    """Through a separate process: a call of os.abort would kill it (exit -6)."""
    provider = write(tmp_path, build(provider="os:abort"), "provider.json")
    backend = write(tmp_path, build(name="os:abort"), "backend.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HARNESS), os.environ.get("PYTHONPATH", "")]))
    runs = [(provider, ["--trust", _fp(VENDOR)]), (provider, ["--trust", _fp(MALLORY), "--cases", "os:abort"]),
            (backend, ["--trust", _fp(VENDOR), "--cases", PROVIDER, "--rerun", "1", "--backend",
                       "harness_fake_backends:DriftBackend"])]
    for path, args in runs:
        proc = subprocess.run([sys.executable, "-m", "pnnx_conformance.cli", "verify-certificate", str(path), *args],
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert "Traceback" not in proc.stderr and "does NOT verify" in proc.stderr
    assert "--backend is 'drift', the certificate certifies 'os:abort'" in proc.stderr


def _resigned(cert: dict, key=VENDOR) -> dict:
    cert.pop("signature", None)
    return sign_certificate(cert, key)


def test_top_level_fields_beside_the_signed_ones_are_refused(tmp_path, capsys):
    """Format 3 states each fact once: a top-level tier or backend beside the signed
    selection and backend is not a certificate, even signed by the issuer."""
    for extra in ({"tier": "full"}, {"backend_name": "other"}, {"pass_rates": {}}):
        cert = _resigned({**build(), **extra})
        rc, err = verify(capsys, write(tmp_path, cert), "--trust", _fp(VENDOR), "--no-case-check")
        assert rc == 2 and f"unexpected field {next(iter(extra))!r}" in err and err.count("\n") == 1


def test_figures_that_disagree_with_the_signed_results_are_refused(tmp_path, capsys):
    cert = build(status="fail-numeric")
    cert["summary"]["fp32"].update(passed=1, failed=0, pass_rate=1.0)          # a summary that lies
    cert["selection"]["case_count"] = 2                                        # a case count that lies
    rc, err = verify(capsys, write(tmp_path, _resigned(cert)), "--trust", _fp(VENDOR), "--no-case-check")
    assert rc == 1
    assert "the summary disagrees with the per-case results (precision fp32)" in err
    assert "the selection counts 2 case(s), the results hold 1" in err


def test_swapped_key_and_resigned_forgeries_are_refused(tmp_path, capsys):
    swapped = build()
    swapped["results"][0]["status"] = "fail-numeric"
    swapped["signature"]["public_key"] = build(MALLORY)["signature"]["public_key"]
    swapped["signature"]["fingerprint"] = _fp(MALLORY)
    swapped["digest"] = digest_of(swapped)
    rc, err = verify(capsys, write(tmp_path, swapped), "--trust", _fp(MALLORY), "--no-case-check")
    assert rc == 1 and "bad signature" in err and "(trusted)" not in err
    forged = _resigned(build(), MALLORY)
    rc, err = verify(capsys, write(tmp_path, forged), "--trust", _fp(VENDOR), "--no-case-check")
    assert rc == 1 and "not one of the trusted keys" in err


def test_rerun_refuses_other_plugin_or_runtime_versions(tmp_path, capsys, harness_path):
    """The installed plug-in and runtime must be the certified ones: no case is re-run."""
    import torch

    cert = build(name="torch", plugin={"distribution": SUITE, "version": "0.0.1"},
                 runtime={"distribution": "torch", "version": "1.0.0"})
    rc, err = verify(capsys, write(tmp_path, cert), "--trust", _fp(VENDOR), "--cases", PROVIDER,
                     "--rerun", "1", "--backend", "torch")
    from importlib.metadata import version

    assert rc == 1 and "re-ran" not in err
    assert f"the installed plug-in is {SUITE} {version(SUITE)}, the certificate's {SUITE} 0.0.1" in err
    assert f"the installed runtime is torch {version('torch')}, the certificate's torch 1.0.0" in err
    assert torch  # the runtime the built-in torch backend declares


def test_rerun_needs_a_backend_named_by_the_user(tmp_path, capsys):
    rc, err = verify(capsys, write(tmp_path, build()), "--trust", _fp(VENDOR), "--rerun", "1")
    assert rc == 2 and "--rerun needs --backend NAME" in err


GARBAGE = {
    "empty": (b"", "not JSON"),
    "truncated": (None, "not JSON"),
    "binary": (bytes(range(256)), "not UTF-8"),
    "a list": (b"[]", "a JSON object is needed"),
    "old format": (b'{"format_version": 2}', "unknown certificate format version 2"),
    "format as text": (b'{"format_version": "3"}', "unknown certificate format version '3'"),
    "duplicate key": (b'{"format_version": 3, "format_version": 3}', "duplicate key 'format_version'"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    "huge integer": (b'{"format_version": ' + b"9" * 5000 + b"}", "not a valid certificate"),
}


@pytest.mark.parametrize("kind", sorted(GARBAGE))
def test_garbage_is_refused_in_one_line(tmp_path, capsys, kind):
    data, reason = GARBAGE[kind]
    if data is None:
        data = json.dumps(build()).encode()[:500]
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    rc, err = verify(capsys, path, "--trust", _fp(VENDOR))
    assert rc == 2 and err.startswith(f"error: {path}: ") and reason in err and err.count("\n") == 1, err


@pytest.mark.parametrize("edit, reason", [
    (lambda c: c["results"][0].update(max_abs=float("nan")), "NaN is not a JSON number"),
    (lambda c: c["selection"].update(case_count=True), "selection.case_count: an integer is needed, not bool"),
    (lambda c: c["results"][0].update(status=["pass"]), "results[0].status: a string is needed, not list"),
    (lambda c: c["backend"].pop("plugin"), "backend: missing field 'plugin'"),
    (lambda c: c["environment"].update(deep=json.loads("[" * 40 + "]" * 40)), "nested deeper than 32"),
])
def test_wrong_types_and_values_are_refused(tmp_path, capsys, edit, reason):
    cert = build()
    edit(cert)
    rc, err = verify(capsys, write(tmp_path, json.dumps(cert)), "--trust", _fp(VENDOR))
    assert rc == 2 and reason in err and err.count("\n") == 1, err


def test_an_oversized_file_is_refused_unread(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(certificate_schema, "MAX_BYTES", 1 << 16)
    cert = build()
    cert["environment"]["padding"] = "x" * (1 << 17)
    rc, err = verify(capsys, write(tmp_path, json.dumps(cert)), "--trust", _fp(VENDOR))
    assert rc == 2 and "larger than" in err


def test_a_provider_the_user_names_that_fails_is_one_line(tmp_path, capsys):
    path = write(tmp_path, build(provider="os:getcwd"))   # returns a string, not cases
    rc, err = verify(capsys, path, "--trust", _fp(VENDOR), "--cases", "os:getcwd")
    assert rc == 2 and err.startswith(f"error: {path}: the case provider os:getcwd failed: ") and err.count("\n") == 1
