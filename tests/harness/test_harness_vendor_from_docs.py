"""A runtime nobody had wrapped, plugged in from docs/VENDOR.md alone (issue 28, item 7): the
onnx package's reference evaluator, as the example package `onnx_reference_backend`. Installed
into a folder of its own (never the shared environment), found through its entry point,
certified on a small selection, signed, verified, all without a traceback."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "conformance" / "examples" / "onnx_reference_backend"


def _cmd(*args, cwd, site):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_a_new_runtime_is_certified_and_verified_in_one_sitting(tmp_path):
    source, site = tmp_path / EXAMPLE.name, tmp_path / "site"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                              "--target", str(site), str(source)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    cli = ["-m", "pnnx_conformance.cli"]
    assert "onnx-reference" in _cmd(*cli, "backends", cwd=tmp_path, site=site).stdout
    assert _cmd(*cli, "keygen", "--out", "vendor.pem", cwd=tmp_path, site=site).returncode == 0
    made = _cmd(*cli, "certify", "--backend", "onnx-reference", "--op", "F.relu,torch.fft.rfft", "--key", "vendor.pem",
                "--out", "certs", "-j", "1", "-q", cwd=tmp_path, site=site)
    assert made.returncode == 0 and "onnx-reference fp32 (fp32): 4/4 cases passed (100.0%)" in made.stderr, made.stderr
    js = tmp_path / "certs" / "certificate-onnx-reference.json"
    cert = json.loads(js.read_text())
    assert cert["backend"]["plugin"] == {"distribution": "pnnx-conformance-onnx-reference", "version": "0.1.0"}
    assert cert["backend"]["runtime"] == {"distribution": "onnx", "version": version("onnx")}
    checked = _cmd(*cli, "verify-certificate", str(js), "--pubkey", "vendor.pub.pem", cwd=tmp_path, site=site)
    assert checked.returncode == 0 and "(trusted)" in checked.stderr and "verifies" in checked.stderr, checked.stderr
