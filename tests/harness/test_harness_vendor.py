"""The example vendor package installs, is discovered through its entry point and runs
cases without any change to the suite."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "conformance" / "examples" / "ort_noopt_backend"
PIP = [sys.executable, "-m", "pip"]


@pytest.fixture
def installed_example(tmp_path_factory):
    # build from a copy: setuptools leaves build/ and *.egg-info beside the sources
    source = tmp_path_factory.mktemp("vendor") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    subprocess.run(PIP + ["install", "-q", "--no-deps", "--no-build-isolation", str(source)],
                   check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(PIP + ["uninstall", "-q", "-y", "pnnx-conformance-ort-noopt"], capture_output=True)


def _cli(*args, cwd):
    env_path = str(Path(__file__).parent)
    import os

    env = dict(os.environ, PYTHONPATH=env_path + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "pnnx_conformance.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=500)


@pytest.mark.slow
def test_vendor_backend_is_discovered_and_certified(installed_example, tmp_path):
    listing = _cli("backends", cwd=tmp_path)
    assert "onnxruntime-noopt" in listing.stdout and "ort_noopt_backend:OrtNoOptBackend" in listing.stdout
    proc = _cli("run", "--tier", "full", "--cases", "harness_cases:cases", "--op", "nn.Conv2d,F.relu,F.dropout",
                "--converter", "reference", "--backend", "onnxruntime-noopt", "--out", str(tmp_path / "out"),
                "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    parity = {r["case"]: r for r in records if r["check"] == "parity"}
    assert parity["nn.Conv2d/k3_p1"]["status"] == "pass"
    assert parity["F.relu/r4"]["status"] == "pass"
    assert parity["nn.Conv2d/k3_p1"]["backend"] == "onnxruntime-noopt"
    assert parity["F.dropout/train"]["status"] == "skipped"
    env = json.loads((tmp_path / "out" / "environment.json").read_text())
    assert "ORT_DISABLE_ALL" in env["backends"]["onnxruntime-noopt"]["device"]
