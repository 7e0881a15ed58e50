"""The backend contract (backends/base.py, HARNESS.md) holds as written (issue 28, item 3):
every pre-rounding the oracle knows has a tolerance row, a mode is judged by what it computes
in (a "default" mode resolved to bf16 by the bf16 row), a bf16 runtime passes under its row
and not under fp32's, the complex convention's metadata keys are the emitter's, one thread."""
from __future__ import annotations

import pytest

from pnnx_conformance.backends import load_backend
from pnnx_conformance.backends.base import ROUNDINGS, Backend
from pnnx_conformance.backends.complex_io import COMPLEX_INPUTS, COMPLEX_OUTPUTS, as_complex, as_pairs
from pnnx_conformance.cases import use_provider
from pnnx_conformance.checks import Executor, _accumulation_bound, parity_verdict
from pnnx_conformance.compare import compare
from pnnx_conformance.oracle import round_inputs
from pnnx_conformance.tolerances import BF16_U, FP16_U, TABLE, tolerance_for
from pnnx_conformance.units import Unit

FAKE = "harness_fake_backends"


class _Case:
    op, tolerance = "nn.ReLU", None


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_every_rounding_the_oracle_knows_has_a_row(rounding):
    import torch

    assert round_inputs([torch.ones(2)], rounding)[0].dtype == torch.float32   # the oracle applies it
    assert ("*", rounding or "fp32") in TABLE


def test_a_mode_is_judged_by_what_it_computes_in():
    assert tolerance_for(_Case, "vendor", "default", "bf16").unit == BF16_U
    assert tolerance_for(_Case, "vendor", "default", "fp16").unit == FP16_U
    assert tolerance_for(_Case, "vendor", "bf16", "bf16") == TABLE[("*", "bf16")]
    assert tolerance_for(_Case, "ncnn-cpu", "default", "bf16") == TABLE[("ncnn-cpu", "default")]  # its own row
    backend = load_backend(f"{FAKE}:DefaultModeBackend")
    assert backend.compute_type("default") == "bf16" and backend.compute_type("fp32") == "fp32"


def test_a_bf16_runtime_passes_under_its_row_and_not_under_fp32s(tmp_path):
    use_provider("harness_cases:cases")
    ex = Executor(tmp_path)
    for case_id in ("F.relu/r4", "nn.Conv2d/k3_p1"):
        unit = Unit(case_id, "reference", "parity", f"{FAKE}:TorchBf16Backend", "bf16")
        case, backend, subject, outputs = ex.run_parity(unit)
        tol, verdict = parity_verdict(case, unit, backend, subject, outputs)
        assert verdict.ok and tol.unit == BF16_U, verdict.message
    # the convolution's bf16 arithmetic is not fp32's: the fp32 row would fail it
    fp32 = tolerance_for(case, "torch-bf16", "fp32")
    assert not compare(outputs, subject.expected, fp32, _accumulation_bound(subject, case, fp32)).ok


def test_complex_keys_are_the_onnx_emitter_s_and_pairs_round_trip():
    import numpy as np

    from pnnx_reference.emit.onnx import export

    assert (COMPLEX_INPUTS, COMPLEX_OUTPUTS) == (export.COMPLEX_INPUTS, export.COMPLEX_OUTPUTS)
    x = np.array([1 + 2j, 3 - 4j], np.complex64)
    assert as_pairs(x).shape == (2, 2) and np.array_equal(as_complex(as_pairs(x)), x)
    with pytest.raises(ValueError, match="trailing"):
        as_complex(np.zeros((2, 3), np.float32))


def test_backends_use_one_thread():
    assert Backend.threads == 1
    opts = load_backend("onnxruntime").session_options()
    assert opts.intra_op_num_threads == opts.inter_op_num_threads == 1


def test_a_run_knows_backends_by_name_and_refuses_two_of_one_name():
    from pnnx_conformance.errors import HarnessError
    from pnnx_conformance.runner import backend_names

    specs = {"onnxruntime": load_backend("onnxruntime"),
             "pnnx_conformance.backends.onnxruntime_cpu:OnnxRuntimeBackend": load_backend(
                 "pnnx_conformance.backends.onnxruntime_cpu:OnnxRuntimeBackend")}
    assert backend_names({f"{FAKE}:WrongBackend": load_backend(f"{FAKE}:WrongBackend")}) == \
        {f"{FAKE}:WrongBackend": "wrong"}
    with pytest.raises(HarnessError, match="are all named 'onnxruntime'"):
        backend_names(specs)
