"""A pytest plug-in for `suite.py`: a per-test time limit (SIGALRM, so a hung conversion fails
its test instead of the run) and one JSON line per test outcome, written by the controlling
process (under xdist a crashed worker's test is recorded as failed, with the crash)."""
from __future__ import annotations

import json
import os
import signal

import pytest

from ..errors import TestTimedOut

GROUPS = {"OnnxBackendNodeModelTest": "node", "OnnxBackendRealModelTest": "real",
          "OnnxBackendSimpleModelTest": "simple", "OnnxBackendPyTorchConvertedModelTest": "pytorch-converted",
          "OnnxBackendPyTorchOperatorModelTest": "pytorch-operator"}


def _alarm(signum, frame):
    raise TestTimedOut(f"no result within {os.environ.get('PNNX_ONNX_BACKEND_TIMEOUT', '')} s")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    seconds = int(os.environ.get("PNNX_ONNX_BACKEND_TIMEOUT", "0") or 0)
    if seconds:
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(seconds)
    try:
        return (yield)
    finally:
        if seconds:
            signal.alarm(0)


def _record(report) -> dict | None:
    parts = report.nodeid.split("::")
    if len(parts) < 3:
        return None
    group, name = GROUPS.get(parts[-2], parts[-2]), parts[-1]
    if report.skipped:
        outcome = "skipped"
    elif report.passed:
        outcome = "passed"
    else:
        outcome = "failed"
    message = ""
    if report.longrepr is not None and not report.passed:
        text = getattr(report.longrepr, "reprcrash", None)
        message = text.message if text is not None else str(report.longrepr)
        if report.skipped and isinstance(report.longrepr, tuple):
            message = str(report.longrepr[2])
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.endswith(":") and len(lines) > 1:  # "AssertionError:" then what was not equal
        first = f"{first} {lines[1]}"
    return {"group": group, "test": name, "outcome": outcome, "message": first[:300],
            "seconds": round(report.duration, 4)}


_STATE = {"worker": False}


def pytest_configure(config):
    _STATE["worker"] = hasattr(config, "workerinput")


def pytest_runtest_logreport(report):
    """Every report but passing set-ups and tear-downs (the reader keeps a test's worst)."""
    if _STATE["worker"] or (report.when in ("setup", "teardown") and report.passed):
        return
    path = os.environ.get("PNNX_ONNX_BACKEND_RESULTS")
    record = _record(report)
    if path and record is not None:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")
