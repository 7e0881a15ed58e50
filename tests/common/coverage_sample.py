"""Coverage measured on a sample of the operator sweeps (issue 32 item 4).

A sweep is a test function parametrized over the op cases (one test per case, thousands in all),
marked `op_case_sweep`. Under `--cov` (`./run.sh coverage`) every test of a sweep runs and
asserts as before, but coverage's tracer only records the first case of each operator of each
sweep function, plus each batch variant of it (`-batch4`, `-nobatch`); the other cases run with
the tracer paused. (pytest-cov's own `no_cover` mark does not pause it under pytest-xdist: a
worker holds two Coverage objects, and stopping the one pytest-cov controls resumes the other's
tracer, so `paused()` pauses whichever collector is tracing.) Python 3.11's tracer roughly
doubles the Python inside torch that a case spends tracing and exporting (eager cases: 4.8 CPU-s
untraced, 11.0 traced), while the sample reaches the same lines of the converter (each
operator's rules, each batch layout): `./run.sh coverage` gave 2,643 of 29,814 statements missed
with it, 2,636 of 29,760 with every case traced. tests/setup/test_coverage_sample.py checks that
every sweep carries the mark and that no tracer runs inside a flagged item.
`PNNX_COVER_EVERY_CASE=1` measures every case (as slow as before).
"""
from __future__ import annotations

import contextlib
import os

MARK = "op_case_sweep"
UNMEASURED = "_coverage_sample_unmeasured"  # set on the items that run with the tracer paused
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
    """Flags every sweep item but the first of its (module, function, operator, variant) as
    run unmeasured; returns how many were flagged."""
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
            setattr(item, UNMEASURED, True)
            paused += 1
        else:
            seen.add(key)
    return paused


@contextlib.contextmanager
def paused(item):
    """Coverage's tracer paused while a flagged item runs (nothing to do without coverage)."""
    collector = _tracing_collector() if getattr(item, UNMEASURED, False) else None
    if collector is None:
        yield
        return
    collector.pause()
    try:
        yield
    finally:
        collector.resume()


def _tracing_collector():
    try:
        from coverage.collector import Collector
    except ImportError:
        return None
    stack = getattr(Collector, "_collectors", None)  # coverage keeps its running collectors there
    return stack[-1] if stack else None
