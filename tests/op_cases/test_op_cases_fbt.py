"""The F / Tensor / torch case families: every table row has cases, ids are readable and stable.
Determinism and traceability of every case are checked by test_op_cases_eager.py."""
from __future__ import annotations

import re

import pytest

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


def test_determinism_and_tracing_are_the_eager_sweeps():
    """Each of these cases is built, run twice and traced by test_op_cases_eager.py (the whole
    full tier, one test per case); this module once ran the same 1,953 cases again per operator."""
    from test_op_cases_eager import CASES as EAGER  # that sweep's own parametrization

    assert {c.id for c in MY_CASES} <= {c.id for c in EAGER}
