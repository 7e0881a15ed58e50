"""A certificate states exactly what was certified, inside the signature and on its page: the
backend by its `name` (the same given as module:Class or entry point), the plug-in's and the
runtime's distributions read from the installed ones, the device, each precision mode with
what it computes in, the selection and the suite's version (issue 28, item 2)."""
from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
from certificates import rec

from pnnx_conformance.certify import SUITE, certify
from pnnx_conformance.results import write_results

HARNESS = Path(__file__).resolve().parents[1] / "harness"
PROVIDER = "harness_cases:cases"
CASES = ("nn.Conv2d/k3_p1", "F.relu/r4", "torch.add/batch2")


@pytest.fixture(autouse=True)
def harness_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HARNESS))


def run_of(tmp_path, backend, modes=("fp32",)) -> Path:
    write_results(tmp_path / "run" / "results.jsonl",
                  [rec(c, "pass", precision=m, backend=backend) for c in CASES for m in modes])
    return tmp_path / "run"


@pytest.mark.parametrize("spec", ["onnxruntime", "pnnx_conformance.backends.onnxruntime_cpu:OnnxRuntimeBackend"])
def test_the_backend_is_named_by_its_name_with_its_distributions(tmp_path, spec):
    cert = certify(spec, tmp_path / "cert", cases_provider=PROVIDER, results=run_of(tmp_path, spec))[0]
    assert cert["backend"] == {
        "name": "onnxruntime", "device": "CPUExecutionProvider",
        "plugin": {"distribution": SUITE, "version": version(SUITE)},
        "runtime": {"distribution": "onnxruntime", "version": version("onnxruntime")},
        "described": {"name": "onnxruntime", "version": version("onnxruntime"), "device": "CPUExecutionProvider"}}
    assert cert["suite"]["version"] == version(SUITE)
    assert (tmp_path / "cert" / "certificate-onnxruntime.json").is_file()


def test_a_default_mode_is_resolved_and_everything_is_on_the_page(tmp_path):
    spec = "harness_fake_backends:DefaultModeBackend"
    cert, js, page = certify(spec, tmp_path / "cert", cases_provider=PROVIDER, ops=["nn.*", "F.*"],
                             results=run_of(tmp_path, spec, ("fp32", "default")))
    assert cert["precisions"]["default"]["rounding"] == "fp16" and cert["precisions"]["default"]["compute"] == "bf16"
    assert cert["precisions"]["fp32"]["compute"] == "fp32"
    assert cert["backend"]["runtime"] == {"distribution": "numpy", "version": version("numpy")}
    assert cert["backend"]["plugin"] is None   # on PYTHONPATH, not an installed distribution
    assert cert["selection"]["case_count"] == 2 and cert["selection"]["ops"] == ["F.*", "nn.*"]
    assert set(cert["summary"]) == {"fp32", "default"} and cert["summary"]["default"]["total"] == 2
    text = page.read_text()
    for shown in ("default-mode", "numpy " + version("numpy"), "not recorded", "cpu:0", "F.*, nn.*",
                  cert["selection"]["case_set_hash"], "<td>default</td><td>fp16</td><td>bf16</td>",
                  f"{SUITE} " + cert["suite"]["version"]):
        assert shown in text, shown
