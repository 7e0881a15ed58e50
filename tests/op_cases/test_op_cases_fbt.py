"""The F / Tensor / torch case families: coverage, determinism, traceability."""
from __future__ import annotations

import re
import warnings

import pytest
import torch

from pnnx_op_cases import batch_variants, registry
from pnnx_op_cases.tables import load_table

MY_TABLES = ("F", "Tensor", "torch")


def _my_cases():
    """Cases of the F / Tensor / torch families only, independent of other families."""
    registry._import_families()
    fns = {fn for op, fs in registry._FAMILIES.items() if op.split(".")[0] in MY_TABLES for fn in fs}
    cases = [c for fn in sorted(fns, key=lambda fn: (fn.__module__, fn.__qualname__, id(fn))) for c in fn()]
    # a family may name rows of several tables (batch_axes.py): keep this test's tables' cases
    return sorted((c for c in cases if c.op.split(".")[0] in MY_TABLES), key=lambda c: c.id)


MY_CASES = _my_cases()
ID_RE = re.compile(r"^(F|Tensor|torch)\.[A-Za-z0-9_.]+/[A-Za-z0-9_.-]+$")


def _row_ops(table):
    return [r.op for r in load_table(table)]


@pytest.mark.parametrize("table", MY_TABLES)
def test_every_row_has_cases(table):
    covered = {c.op for c in MY_CASES}
    missing = [op for op in _row_ops(table) if op not in covered]
    assert not missing, f"rows without cases: {missing}"


@pytest.mark.parametrize("table", MY_TABLES)
def test_every_row_has_a_small_smoke_set(table):
    for op in _row_ops(table):
        smoke = [c for c in MY_CASES if c.op == op and c.tier == "smoke"]
        assert 1 <= len(smoke) <= 2, (op, len(smoke))


def test_case_ops_are_table_rows():
    rows = {op for t in MY_TABLES for op in _row_ops(t)}
    assert {c.op for c in MY_CASES} <= rows


def test_ids_unique_readable_and_stable():
    ids = [c.id for c in MY_CASES]
    assert len(ids) == len(set(ids))
    bad = [i for i in ids if not ID_RE.match(i)]
    assert not bad, bad[:5]
    assert [c.id for c in _my_cases()] == ids


def test_registry_serves_these_cases():
    ids = {c.id for c in registry.all_cases() if c.table in MY_TABLES}
    derived = {c.id for c in batch_variants.derive(MY_CASES)}  # the batch variants the registry adds
    assert ids == {c.id for c in MY_CASES} | derived


def test_variants_per_parametrised_operator():
    counts = {}
    for c in MY_CASES:
        counts[c.op] = counts.get(c.op, 0) + 1
    few = {op: n for op, n in counts.items() if n < 5}
    assert not few, f"operators with fewer than 5 variants: {few}"


def test_reason_tags_carry_reasons():
    for c in MY_CASES:
        for tag in ("random", "no-trace"):
            if tag in c.tags:
                assert c.reasons.get(tag), c.id


def _flat(out):
    return out if isinstance(out, (tuple, list)) else (out,)


def _same(a, b):
    if a.is_complex():     # some fft outputs are lazy conjugate views
        return torch.equal(torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj()))
    return torch.equal(a, b) or (a.is_floating_point() and torch.allclose(a, b, atol=0, rtol=0, equal_nan=True))


def _check_case(case):
    out1 = case.run_eager()
    out2 = case.run_eager()
    assert len(out1) == len(out2) >= 1
    assert all(isinstance(t, torch.Tensor) for t in out1)
    for a, b in zip(out1, out2):
        assert a.shape == b.shape and a.dtype == b.dtype
        if "random" not in case.tags:
            assert _same(a, b), "two eager runs differ"
    if "no-trace" in case.tags:
        return
    model = case.make_model()
    inputs = case.make_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, tuple(case.make_inputs()), check_trace=False)
    with torch.no_grad():
        got = _flat(traced(*inputs))
    assert len(got) == len(out1)
    if "random" not in case.tags:
        for a, b in zip(got, out1):
            assert a.shape == b.shape
            if a.is_complex():
                a, b = torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj())
            assert _same(a, b) or torch.allclose(a.double(), b.double(), atol=1e-6, rtol=1e-5, equal_nan=True), \
                "traced output differs from eager"


# One test per operator (not per case) keeps pytest's per-test overhead small; a failure
# names every failing case id with its error.
@pytest.mark.parametrize("op", sorted({c.op for c in MY_CASES}))
def test_cases_build_run_twice_and_trace(op):
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in (c for c in MY_CASES if c.op == op):
            try:
                _check_case(case)
            except Exception as exc:  # noqa: BLE001 - collect every failing case of the operator
                failures.append(f"{case.id}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    assert not failures, "\n".join(failures)
