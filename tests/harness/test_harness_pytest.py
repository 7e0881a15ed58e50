"""The suite under pytest: one test per unit; -k, -n (xdist) and --lf work."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _pytest(tmp_path, *extra):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "pnnx_conformance.cli", "pytest", "--tier", "full",
           "--conformance-cases", "harness_cases:cases", "--conformance-converter", "harness_fake_backends:NullConverter",
           "--conformance-backend", "torch", "--conformance-backend", "harness_fake_backends:WrongBackend",
           "-q", "-p", "no:randomly", *extra]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|failed|skipped|deselected)", proc.stdout))
    return proc, counts


@pytest.mark.slow
def test_pytest_ids_filters_xdist_and_last_failed(tmp_path):
    proc, counts = _pytest(tmp_path, "-n", "2", "-k", "relu or Conv2d")
    # per case: convert pass, format fail (the null converter writes nothing), roundtrip skip,
    # torch pass, wrong fail
    counts.pop("deselected", None)  # xdist does not always report it
    assert counts == {"passed": 4, "failed": 4, "skipped": 4}, proc.stdout[-3000:]
    assert "F.relu/r4::harness_fake_backends:NullConverter::parity::harness_fake_backends:WrongBackend::fp32" in proc.stdout
    proc, counts = _pytest(tmp_path, "--lf", "-k", "relu or Conv2d")
    assert counts.get("failed") == 4 and "passed" not in counts, proc.stdout[-3000:]
