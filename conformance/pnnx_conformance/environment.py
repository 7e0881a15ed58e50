"""The environment record written beside the results (suite, versions, machine, device)."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("pnnx-reference", "pnnx-conformance", "torch", "numpy", "onnx", "onnxruntime", "ncnn", "pnnx")


def _git(*args: str) -> str:
    root = Path(__file__).resolve().parents[2]
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def suite_commit() -> str:
    """The suite checkout's HEAD (10 hex digits), with "+" when its files differ from it;
    "" outside a git checkout."""
    head = _git("rev-parse", "--short=10", "HEAD")
    return head + ("+" if head and _git("status", "--porcelain", "--untracked-files=no") else "")


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return ""


def environment(backends: dict, converters: dict) -> dict:
    return {
        "suite_commit": _git("rev-parse", "HEAD"),
        "suite_dirty": bool(_git("status", "--porcelain")),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": {p: _version(p) for p in PACKAGES},
        "threads": {k: os.environ.get(k, "") for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")},
        "vk_icd_filenames": os.environ.get("VK_ICD_FILENAMES", ""),
        "backends": backends,
        "converters": converters,
    }
