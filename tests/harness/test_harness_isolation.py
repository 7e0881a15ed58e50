"""A backend that aborts, segfaults, hangs or allocates without bound becomes a recorded
result, and the run goes on with a fresh worker."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from pnnx_conformance.report.repro import bundle_dir
from pnnx_conformance.runner import RunOptions, run

FAKE = "harness_fake_backends"


def _run(tmp_path, backends, **kw):
    opts = RunOptions(out=tmp_path, tier="full", pattern="F.relu/*", backends=backends,
                      converters=[f"{FAKE}:NullConverter"], cases_provider="harness_cases:cases",
                      jobs=1, progress=False, **kw)
    summary = run(opts)
    return {r.backend: r for r in summary.results if r.check == "parity"}, summary


def test_crashes_become_results_and_the_run_goes_on(tmp_path):
    parity, summary = _run(tmp_path, [f"{FAKE}:AbortBackend", f"{FAKE}:SegfaultBackend", "torch"], timeout_s=60)
    abort, segv = parity["abort"], parity["segfault"]   # results name a backend by its name
    assert abort.status == "crash" and "SIGABRT" in abort.error
    assert "about to abort" in abort.detail
    assert segv.status == "crash" and "SIGSEGV" in segv.error
    assert abort.stage == segv.stage == "run"   # the worker's last stage mark before it died
    assert "Segmentation fault" in segv.detail
    assert parity["torch"].status == "pass"
    assert abort.op == "F.relu"


def test_hang_is_a_timeout_and_memory_blowup_is_oom(tmp_path):
    parity, _ = _run(tmp_path, [f"{FAKE}:HangBackend", f"{FAKE}:HogBackend", "torch"],
                     timeout_s=5, memory_mb=6144)  # F.relu's units answer in well under 1 s
    hang, hog = parity["hang"], parity["hog"]
    assert hang.status == "timeout" and "no result in 5 s" in hang.error
    assert hog.status == "oom"
    assert hang.stage == hog.stage == "run"
    assert parity["torch"].status == "pass"


def test_raising_and_wrong_backends(tmp_path):
    """Each failure with its stage and the line of its message that names the cause."""
    names = ["RaisingBackend", "WrongBackend", "LoadFailingBackend", "CompileFailingBackend", "WrongShapeBackend"]
    parity, summary = _run(tmp_path, [f"{FAKE}:{n}" for n in names])
    raising = parity["raising"]
    assert (raising.status, raising.stage, raising.error) == ("fail-runtime", "run", "ValueError: kernel missing")
    wrong = parity["wrong"]
    assert wrong.status == "fail-numeric" and wrong.stage == "mismatch"
    assert wrong.metrics.max_abs == pytest.approx(1.0) and wrong.metrics.mismatch_pct == 100.0
    load = parity["load-failing"]
    assert (load.stage, load.error) == ("load", "RuntimeError: DFT: signal dimension 3 is not supported")
    assert parity["compile-failing"].stage == "compile"
    shape = parity["wrong-shape"]
    assert shape.status == "fail-numeric" and shape.stage == "mismatch"
    assert shape.error == "shape mismatch: output 0 has shape [1, 1, 3, 4, 5], the oracle's [1, 3, 4, 5]"
    assert shape.metrics.max_abs is None and shape.metrics.cosine is None and shape.metrics.mismatch_pct == 100.0
    # the NullConverter writes nothing: format fails, roundtrip is cleanly not supported
    by_check = {r.check: r for r in summary.results if r.backend is None}
    assert by_check["format"].status == "fail-format"
    assert by_check["roundtrip"].status == "not-supported"


def test_a_numeric_failure_bundle_keeps_the_workers_outputs_without_running_the_backend_again(
        tmp_path, monkeypatch):
    monkeypatch.setenv("PNNX_TEST_MAIN_PID", str(os.getpid()))  # the backend aborts if run here
    parity, _ = _run(tmp_path, [f"{FAKE}:WrongAbortingInTheMainProcessBackend"])
    wrong = parity["wrong-aborting"]
    assert wrong.status == "fail-numeric"
    bundle = bundle_dir(tmp_path, wrong)
    np.testing.assert_array_equal(np.load(bundle / "actual" / "0.npy"), np.load(bundle / "inputs" / "0.npy") + 1)


def test_vulkan_without_a_device_fails_instead_of_skipping(tmp_path, monkeypatch):
    monkeypatch.setenv("VK_ICD_FILENAMES", str(tmp_path / "no-such-icd.json"))  # workers inherit it
    opts = RunOptions(out=tmp_path, tier="full", ops=["F.relu"], backends=["ncnn-vulkan"],
                      converters=["reference"], cases_provider="harness_cases:cases", jobs=1, progress=False)
    results = [r for r in run(opts).results if r.check == "parity"]
    assert {r.precision for r in results} == {"fp32", "fp16"}
    for r in results:
        assert r.status == "fail-runtime" and "no Vulkan device" in r.error


def test_a_model_that_crashes_ncnn_itself_is_a_crash_record(tmp_path):
    """Not a plug-in that aborts on purpose: ncnn's own heap corrupted by the model it runs
    (an empty key/value past written as `MemoryData 0=0` concatenated onto SDPA's keys). What a corrupted heap does next is
    up to it (glibc aborts, a lock of the corrupted allocator hangs): either way the run records
    it against that case and backend and goes on with a fresh worker."""
    opts = RunOptions(out=tmp_path, tier="full", backends=["ncnn-cpu", "torch"],
                      converters=[f"{FAKE}:EmptyPastNcnnConverter"], cases_provider="harness_cases:crash_cases",
                      jobs=1, progress=False, timeout_s=5)  # each unit that answers does so in under 1 s
    parity = {(r.backend, r.precision): r for r in run(opts).results if r.check == "parity"}
    for precision in ("fp32", "default"):
        died = parity[("ncnn-cpu", precision)]
        assert died.case == "F.scaled_dot_product_attention/empty_past"
        assert died.status in ("crash", "timeout"), died
        assert re.search(r"SIGSEGV|SIGABRT|no result in 5 s; worker killed", died.error)
    assert parity[("torch", "fp32")].status == "pass"
