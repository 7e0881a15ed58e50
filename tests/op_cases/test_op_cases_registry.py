"""The registry as a whole: coverage of every table row, ids, tags, reasons, tiers."""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from pnnx_op_cases import registry, tables
from pnnx_op_cases.case import KNOWN_TAGS, REASON_TAGS

CASES = registry.all_cases()
ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*/[A-Za-z0-9_.-]+$")


@pytest.mark.parametrize("table", tables.TABLES)
def test_every_row_of_every_table_has_a_case(table):
    ops = {c.op for c in CASES}
    missing = [r.op for r in tables.load_table(table) if r.op not in ops]
    assert not missing, f"{len(missing)} rows of {table} without cases: {missing[:20]}"


def test_every_case_belongs_to_a_table_row():
    rows = {r.op for r in tables.all_rows()}
    strays = sorted({c.op for c in CASES} - rows)
    assert not strays


def test_ids_are_unique_and_readable():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    bad = [i for i in ids if not ID_RE.match(i)]
    assert not bad, bad[:10]
    wrong_prefix = [c.id for c in CASES if not c.id.startswith(c.op + "/")]
    assert not wrong_prefix, wrong_prefix[:10]


def _fingerprints(cases) -> str:
    return "".join(f"{c.id} {hashlib.sha1((c.source + repr(c.inputs)).encode()).hexdigest()}\n" for c in cases)


def test_ids_and_sources_are_stable_across_processes():
    """This process's registry against a fresh one's, built under another string-hash seed."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pnnx_op_cases import registry; "
            "from test_op_cases_registry import _fingerprints; print(_fingerprints(registry.all_cases()), end='')")
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    other = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], capture_output=True, text=True,
                           check=True, env=dict(os.environ, PYTHONHASHSEED=seed)).stdout
    assert other == _fingerprints(CASES)


def test_tags_are_known_and_reasoned():
    unknown = {(c.id, t) for c in CASES for t in c.tags - KNOWN_TAGS}
    assert not unknown, sorted(unknown)[:10]
    unreasoned = [c.id for c in CASES for t in c.tags & REASON_TAGS if not c.reasons.get(t)]
    assert not unreasoned, unreasoned[:10]
    stray_reasons = [c.id for c in CASES if set(c.reasons) - c.tags]
    assert not stray_reasons, stray_reasons[:10]


def test_tolerance_hints_say_why():
    vague = [c.id for c in CASES if c.tolerance and len(c.tolerance.reason.strip()) < 10]
    assert not vague


def _is_batch_variant(case) -> bool:
    return bool({"batched", "unbatched"} & case.tags) and ("-batch" in case.id or "-nobatch" in case.id)


def test_smoke_tier_is_small_and_covers_every_row():
    smoke = Counter(c.op for c in CASES if c.tier == "smoke" and not _is_batch_variant(c))
    ops = {c.op for c in CASES}
    no_smoke = sorted(ops - set(smoke))
    assert not no_smoke, no_smoke[:20]
    big = {op: n for op, n in smoke.items() if n > 3}
    assert not big, big
    variants = Counter(c.op for c in CASES if c.tier == "smoke" and _is_batch_variant(c))
    assert max(variants.values()) == 1, "one batch variant per row joins the smoke tier"
    assert len(registry.select(tier="smoke")) <= 3 * len(ops)


def test_modules_with_parameters_have_at_least_five_variants():
    per_op = Counter(c.op for c in CASES if c.table == "nn")
    thin = []
    for op, n in per_op.items():
        first = registry.select(op=op)[0]
        if n < 5 and any(True for _ in first.make_model().parameters()):
            thin.append((op, n))
    assert not thin, thin


def test_inputs_stay_small():
    big = [c.id for c in CASES if sum(_numel(s.shape) for s in c.inputs) > 20000]
    assert not big, big[:10]


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def test_select_filters():
    conv = registry.select(op="nn.Conv2d")
    assert conv and all(c.op == "nn.Conv2d" for c in conv)
    smoke = registry.select(table="nn", tier="smoke")
    assert smoke and all(c.table == "nn" and "smoke" in c.tags for c in smoke)
    assert len(registry.select(table="nn")) > len(smoke)
    glob = registry.select(pattern="nn.MaxPool2d/k2*")
    assert glob and all(c.id.startswith("nn.MaxPool2d/k2") for c in glob)
    tagged = registry.select(tag="no-trace")
    assert tagged and all("no-trace" in c.tags for c in tagged)


def test_get_case_round_trips_and_rejects_unknown():
    assert registry.get_case(CASES[0].id) is CASES[0]
    with pytest.raises(KeyError):
        registry.get_case("nn.Conv2d/no_such_variant")
