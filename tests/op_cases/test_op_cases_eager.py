"""Every case of the full tier builds, runs twice in eager with identical outputs, and traces
with torch.jit.trace (unless tagged no-trace), the trace reproducing the eager outputs."""
from __future__ import annotations

import warnings

import pytest
import torch

from pnnx_op_cases import registry
from pnnx_op_cases.case import TAG_NO_TRACE, TAG_RANDOM

CASES = registry.all_cases()
IDS = [c.id for c in CASES]


def _same(a, b) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)) and \
            torch.equal(a.isnan(), b.isnan())
    return torch.equal(a, b)


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_runs_twice_identically(case):
    first, second = case.run_eager(), case.run_eager()
    assert len(first) == len(second) >= 1
    assert all(isinstance(t, torch.Tensor) for t in first), "outputs must be a flat tuple of tensors"
    for i, (a, b) in enumerate(zip(first, second)):
        assert _same(a, b), f"output {i} differs between two runs"


@pytest.mark.parametrize("case", [c for c in CASES if TAG_NO_TRACE not in c.tags],
                         ids=[c.id for c in CASES if TAG_NO_TRACE not in c.tags])
def test_case_traces(case):
    model = case.make_model()
    inputs = case.make_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, tuple(case.make_inputs()), check_trace=False)
    if TAG_RANDOM in case.tags:
        return
    expected = case.run_eager()
    torch.manual_seed(0)        # ops that draw random numbers see the eager run's state
    with torch.no_grad():
        got = _as_tuple(traced(*inputs))
    assert len(got) == len(expected)
    tol = {"atol": case.tolerance.atol, "rtol": case.tolerance.rtol} if case.tolerance else {}
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, equal_nan=True, **tol)
