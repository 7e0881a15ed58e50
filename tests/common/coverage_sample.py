"""Coverage measured on a sample of the operator sweeps (issue 32 item 4).

A sweep is a test function parametrized over the op cases (one test per case, thousands in
all), marked `op_case_sweep`. Under `--cov` every test of a sweep runs and asserts as before,
but coverage's tracer only records the first case of each operator of each sweep function,
plus each batch variant of it (`-batch4`, `-nobatch`); the other cases run with the tracer
paused (pytest-cov's `no_cover` mark). Python 3.11's tracer roughly doubles the time of the
Python inside torch that a case spends tracing and exporting, so measuring all 5,094 eager
cases cost about as much as running them twice; the sample reaches the same lines of the
converter (each operator's rules, each batch layout), measured by tests/setup/test_test_groups.py's
check that every sweep carries the mark and by the coverage total the unit run prints.
`PNNX_COVER_EVERY_CASE=1` measures every case (as slow as before).
"""
from __future__ import annotations

import os

import pytest

MARK = "op_case_sweep"
VARIANTS = ("-batch4", "-nobatch")


def operator_of(item) -> str | None:
    """The operator a sweep item runs: the `op` of a case parameter, the text before the '/'
    of a case id, or an `op` parameter; None for an item not parametrized by a case."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    for name in ("case", "case_id", "op"):
        value = params.get(name)
        if value is None:
            continue
        op = getattr(value, "op", None)
        if op is not None:
            return op
        if isinstance(value, str):
            return value.split("/", 1)[0]
    return None


def variant_of(item) -> str:
    name = getattr(getattr(item, "callspec", None), "id", "")
    return next((v for v in VARIANTS if name.endswith(v)), "")


def sample(items) -> int:
    """Marks `no_cover` on every sweep item but the first of its (module, function, operator,
    variant); returns how many were marked."""
    if os.environ.get("PNNX_COVER_EVERY_CASE") == "1":
        return 0
    seen: set[tuple] = set()
    paused = 0
    for item in items:
        if item.get_closest_marker(MARK) is None:
            continue
        op = operator_of(item)
        if op is None:
            continue
        key = (item.nodeid.split("::", 1)[0], getattr(item, "originalname", item.name), op, variant_of(item))
        if key in seen:
            item.add_marker(pytest.mark.no_cover)
            paused += 1
        else:
            seen.add(key)
    return paused
