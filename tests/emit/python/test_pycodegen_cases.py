"""Every smoke-tier op case: convert with the reference converter, write `_pnnx.py`, run the
generated Model on the case inputs and compare bit for bit with eager PyTorch. Then load the
written pnnx.param/bin back, regenerate, and compare again (load-back without the model)."""
from __future__ import annotations

import pytest

from pnnx_op_cases.case import TAG_RANDOM
from pnnx_op_cases.registry import all_cases
from pnnx_reference import api
from pnnx_reference.emit import regenerate
from pycodegen_helpers import assert_bitwise, generate, run_generated

# slow: one conversion and two imports of generated code per case
pytestmark = [pytest.mark.slow, pytest.mark.op_case_sweep]  # coverage on a sample of the cases (coverage_sample.py)

# ONNX-table cases are ONNX graphs run by onnxruntime: the Python-API door does not apply to them
# (the harness shows it as n/a); the ONNX door's round trip is tests/frontends/onnx/test_onnx_cases.py
SMOKE = [c for c in all_cases() if c.tier == "smoke" and TAG_RANDOM not in c.tags and "onnx" not in c.tags]


# Known converter gaps, failing for the reason given (strict: a fix must remove the entry).
KNOWN_GAPS: dict[str, str] = {}


@pytest.mark.parametrize("case", SMOKE, ids=[c.id for c in SMOKE])
def test_case_round_trips_bitwise(tmp_path, case, request):
    if case.id in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[case.id]))
    expected = case.run_eager()
    inputs = case.make_inputs()
    graph = api.capture(case.make_model(), inputs)
    py = generate(graph, tmp_path, name="case")
    assert_bitwise(run_generated(py, *inputs), expected)
    again = regenerate(tmp_path / "case.pnnx.param", tmp_path / "again_pnnx.py")
    assert_bitwise(run_generated(again, *inputs), expected)
