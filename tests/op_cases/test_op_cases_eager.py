"""Every case of the full tier builds, runs twice in eager with identical outputs, and traces
with torch.jit.trace (unless tagged no-trace), the trace reproducing the eager outputs.

One test per case does all three, so each model source is compiled a minimum of times.
"""
from __future__ import annotations

import warnings

import pytest
import torch

from pnnx_op_cases import registry
from pnnx_op_cases.case import TAG_NO_TRACE, TAG_RANDOM

CASES = registry.all_cases()

# torch warns about perfectly valid configurations (padding='same' copies, nested tensors)
pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning"),
              pytest.mark.op_case_sweep]  # coverage on a sample of the cases (coverage_sample.py)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """The models are tiny: with pytest-xdist workers, one torch thread each is fastest."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _same(a, b) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(torch.nan_to_num(a),
                                                                 torch.nan_to_num(b))
    return torch.equal(a, b)


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _check_trace(case, expected):
    model = case.make_model()
    inputs = case.make_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, tuple(case.make_inputs()), check_trace=False)
    if TAG_RANDOM in case.tags:
        return                   # a random op's trace cannot be compared value by value
    with torch.no_grad():
        got = _as_tuple(traced(*inputs))
    assert len(got) == len(expected), "trace returns a different number of outputs"
    tol = {"atol": case.tolerance.atol, "rtol": case.tolerance.rtol} if case.tolerance else {}
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, equal_nan=True, **tol)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_runs_twice_identically_and_traces(case):
    first, second = case.run_eager(), case.run_eager()
    assert len(first) == len(second) >= 1
    assert all(isinstance(t, torch.Tensor) for t in first), "outputs must be a flat tuple of tensors"
    for i, (a, b) in enumerate(zip(first, second)):
        if TAG_RANDOM in case.tags:      # e.g. uninitialised memory: only the layout is fixed
            assert (a.shape, a.dtype) == (b.shape, b.dtype), f"output {i} changes layout"
        else:
            assert _same(a, b), f"output {i} differs between two runs"
    if TAG_NO_TRACE not in case.tags:
        _check_trace(case, first)
