"""The export tests' one way to run and judge a model: the conformance harness's own pieces.

Op cases go through `pnnx_conformance` itself (`parity`: its Executor converts with the
reference converter plug-in, runs the backend plug-in and judges with the tolerance table).
Tests that build their own graphs run the same backend plug-ins on the files they wrote
(`run_backend`, `run_ncnn`) and compare with the harness's `compare` (`assert_close`).
There is no second runner or checker in the tests or in the converter."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends import load_backend
from pnnx_conformance.checks import Executor, parity_verdict
from pnnx_conformance.compare import compare
from pnnx_conformance.oracle import to_numpy
from pnnx_conformance.tolerances import Tolerance
from pnnx_conformance.units import Unit

# the ncnn modes of the export tests -> (backend plug-in, precision)
NCNN_MODES = {"fp32": ("ncnn-cpu", "fp32"), "default": ("ncnn-cpu", "default"),
              "vulkan": ("ncnn-vulkan", "fp16"), "vulkan-fp32": ("ncnn-vulkan", "fp32")}
_BACKENDS: dict = {}


def backend(name: str):
    """One instance per test process (the Vulkan device lives as long as it)."""
    if name not in _BACKENDS:
        _BACKENDS[name] = load_backend(name)
    return _BACKENDS[name]


def tolerance(atol: float, rtol: float, why: str) -> Tolerance:
    """A bound a test pins (plain atol + rtol, no accumulation term)."""
    return Tolerance(atol, rtol, why, accum=0.0)


# --- files a test wrote ---------------------------------------------------------------------
def run_backend(name: str, paths: dict, inputs, precision: str = "fp32") -> list[np.ndarray]:
    """Run backend plug-in `name` on artefacts {kind: path} ("ncnn.param", "pnnx.onnx", ...)."""
    arts = Artefacts("test", "-", Path("."), {k: Path(v) for k, v in paths.items()})
    runner = backend(name)
    try:
        runner.prepare(arts, precision)
        return runner.run([_numpy(x) for x in inputs])
    finally:
        runner.release()


def ncnn_paths(base) -> dict:
    """`write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py")`'s files."""
    paths = {"ncnn.param": f"{base}.ncnn.param", "ncnn.bin": f"{base}.ncnn.bin"}
    if Path(f"{base}_ncnn.py").is_file():   # it declares the inputs that carry every dim
        paths["ncnn.py"] = f"{base}_ncnn.py"
    return paths


def run_ncnn(base, inputs, mode: str = "fp32") -> list[np.ndarray]:
    """The conformance ncnn backend in one of NCNN_MODES (ncnn-vulkan's fp16 is ncnn's default
    options on the GPU). Batch-1 inputs lose their batch axis and outputs get it back; inputs
    the generated `_ncnn.py` feeds whole (batch_index=233) go in as they are."""
    name, precision = NCNN_MODES[mode]
    return run_backend(name, ncnn_paths(base), inputs, precision)


def run_onnx(path, inputs) -> list[np.ndarray]:
    """onnxruntime (CPU) through its conformance backend; complex inputs/outputs as complex."""
    return run_backend("onnxruntime", {"pnnx.onnx": path}, inputs)


def assert_close(got, expected, tol: Tolerance | dict, what: str = "") -> None:
    """The harness's comparison: same number of outputs, the same shapes (no size-1 axes
    forgiven), values within `tol` (NaN matches NaN; complex as (real, imaginary) pairs)."""
    if isinstance(tol, dict):
        tol = tolerance(tol["atol"], tol["rtol"], "pinned by the test")
    verdict = compare([_numpy(g) for g in got], to_numpy(list(expected)), tol)
    assert verdict.ok, f"{what}: {verdict.message}"


def _numpy(x) -> np.ndarray:
    return to_numpy(x)[0] if hasattr(x, "detach") else np.asarray(x)


# --- op cases -------------------------------------------------------------------------------
def parity(ex: Executor, case_id: str, backend_name: str, precision: str,
           within: Tolerance | None = None) -> None:
    """The conformance parity check of the reference converter on an op case, as the harness
    runs it (tolerance table with its accumulation bound); `within` also holds the outputs to
    a bound the test pinned, so a case moved here from a hand-written test is judged no more
    loosely than it was."""
    unit = Unit(case_id, "reference", "parity", backend_name, precision)
    case, runner, subject, outputs = ex.run_parity(unit)
    tol, verdict = parity_verdict(case, unit, runner, subject, outputs)
    assert verdict.ok, f"{unit.id}: {verdict.message} (tolerance: {tol.reason})"
    if within is not None:
        ncnn = runner.consumes[:1] == ("ncnn.param",)
        pinned = compare(outputs, subject.expected, within, loose_rank=ncnn)
        assert pinned.ok, f"{unit.id}: {pinned.message} (pinned bound: {within.reason})"
