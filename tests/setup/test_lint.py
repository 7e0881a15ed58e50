"""The linter (ruff) and the type checker (mypy) are part of the test command: each runs as
configured in pyproject.toml and the test fails with its findings."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINTED = ["reference/", "conformance/", "op_cases/", "model_zoo/", "tests/", "benchmarks/"]


def _run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]


def test_ruff_finds_nothing():
    proc = _run("ruff", "check", "--no-cache", *LINTED)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_checks_pyflakes_and_syntax_errors():
    selected = _config()["ruff"]["lint"]["select"]
    assert "F" in selected and "E9" in selected, selected


def test_mypy_finds_nothing(tmp_path):
    proc = _run("mypy", "--cache-dir", str(tmp_path / "mypy-cache"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_checks_the_ir_the_formats_and_the_registry_kit():
    files = _config()["mypy"]["files"]
    for path in ("reference/pnnx_reference/ir.py", "reference/pnnx_reference/formats",
                 "reference/pnnx_reference/registry.py"):
        assert path in files, files
        assert (ROOT / path).exists(), path


def test_the_configured_ruff_reports_an_unused_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n")
    proc = _run("ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(planted))
    assert proc.returncode == 1 and "F401" in proc.stdout, proc.stdout + proc.stderr
