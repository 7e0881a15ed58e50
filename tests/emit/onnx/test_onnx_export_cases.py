"""Every smoke-tier op case through the conformance harness: the reference converter plug-in
exports it, the onnxruntime backend runs pnnx.onnx and the tolerance table judges it (the
same unit `pnnx-conformance run --backend onnxruntime` records). The written pnnx.onnx also
passes the ONNX checker and agrees with the pnnx.param operand shapes under strict shape
inference, and the outputs also hold to this test's own bound (1e-4, no accumulation term).

An operator without an ONNX form must be declined by name (the unit is then not-supported
with the emitter's reason); a random case must still export and run."""
from __future__ import annotations

import collections

import onnx
import pytest

from conformance_runs import parity, run_backend, tolerance
from onnx_export_util import shape_mismatches
from pnnx_conformance.checks import Executor
from pnnx_op_cases.registry import select
from pnnx_reference.formats import pnnx_param

pytestmark = pytest.mark.op_case_sweep  # coverage on a sample of the cases (coverage_sample.py)

# ONNX-table cases are ONNX graphs run by onnxruntime: the Python-API capture this test exports
# does not apply to them (the harness shows that route as n/a)
SMOKE = [c for c in select(tier="smoke") if "onnx" not in c.tags]


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    return Executor(tmp_path_factory.mktemp("onnx_cases"))


def _outcome(ex, case) -> str:
    """match | unsupported | random, asserting what each means."""
    arts = ex.artefacts(case, "reference")
    if not arts.has("pnnx.onnx"):
        declined = arts.missing_reason(("pnnx.onnx",))
        assert "unsupported for ONNX" in declined and "(" in declined, declined
        return "unsupported"
    model = onnx.load(arts.paths["pnnx.onnx"])
    onnx.checker.check_model(model, full_check=True)
    assert shape_mismatches(model, pnnx_param.load(arts.paths["pnnx.param"])) == []
    if "random" in case.tags:  # values cannot be compared: it must still run, with torch's shapes
        subject = ex.subject(case)
        got = run_backend("onnxruntime", arts.paths, subject.numpy_inputs)
        assert [g.shape for g in got] == [e.shape for e in subject.expected]
        return "random"
    parity(ex, case.id, "onnxruntime", "fp32", within=_pinned(case))
    return "match"


def _pinned(case):
    """This test's bound before it ran through the harness: 1e-4 absolute and relative, or the
    case's hint where that is wider (the table adds an accumulation term; this does not)."""
    hint = case.tolerance
    return tolerance(max(1e-4, hint.atol if hint else 0), max(1e-4, hint.rtol if hint else 0),
                     "the ONNX export test's own bound")


@pytest.mark.parametrize("case", SMOKE, ids=[c.id for c in SMOKE])
def test_smoke_case_exports_and_matches(case, ex):
    _outcome(ex, case)


def test_most_smoke_cases_export(ex):
    """A floor against regressions: the smoke tier exported and matched 187/240 on the first
    run of this suite (the module's executor: a case this worker converted already is not converted again)."""
    results = collections.Counter(_outcome(ex, c) for c in SMOKE[::16])
    assert results["match"] >= 0.7 * sum(results.values()), results
