"""Round-trip sweep over every op case: capture at optlevel 2, write NAME.pnnx.param/bin and
NAME_pnnx.py, run the generated Model on the case inputs, compare bit for bit with eager.

Prints per-table counts (ok / mismatch / error / skipped) and the failing case ids grouped
by their first error line. Cases tagged `random` are skipped (their output is random).

    python benchmarks/roundtrip_sweep.py [--jobs 2] [--timeout 60] [--table nn] [--op F.relu]
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import multiprocessing
import signal
import sys
import tempfile
import time
from pathlib import Path

OK, MISMATCH, ERROR, SKIPPED = "ok", "mismatch", "error", "skipped"


class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout("case timed out")


def _same(actual, expected) -> str | None:
    """None when `actual` equals `expected` bit for bit, else why not."""
    import torch

    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return f"structure differs: {type(actual).__name__} vs {type(expected).__name__}"
        for a, e in zip(actual, expected):
            why = _same(a, e)
            if why:
                return why
        return None
    if not isinstance(expected, torch.Tensor):
        return None if actual == expected else f"value differs: {actual!r} vs {expected!r}"
    if not isinstance(actual, torch.Tensor):
        return f"got {type(actual).__name__}, expected a tensor"
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"dtype/shape differs: {actual.dtype}{tuple(actual.shape)} vs {expected.dtype}{tuple(expected.shape)}"
    if torch.equal(actual, expected):
        return None
    if expected.is_floating_point() or expected.is_complex():
        if torch.equal(actual.isnan(), expected.isnan()) and torch.equal(actual.nan_to_num(), expected.nan_to_num()):
            return None
    return "values differ"


def _run_generated(py: Path, inputs):
    import torch

    spec = importlib.util.spec_from_file_location(f"sweep_{py.parent.name}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.Model().eval()
    with torch.no_grad():
        out = net(*inputs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _check(case) -> tuple[str, str]:
    from pnnx_op_cases.case import TAG_RANDOM
    from pnnx_reference import api
    from pnnx_reference.emit import write_python
    from pnnx_reference.formats import pnnx_param

    if TAG_RANDOM in case.tags:
        return SKIPPED, "random output"
    expected = case.run_eager()
    inputs = case.make_inputs()
    with tempfile.TemporaryDirectory(prefix="sweep_") as folder:
        folder = Path(folder)
        graph = api.capture(case.make_model(), inputs, optlevel=2)
        param, bin_, py = folder / "case.pnnx.param", folder / "case.pnnx.bin", folder / "case_pnnx.py"
        pnnx_param.save(graph, param, bin_)
        write_python(graph, py, bin_)
        why = _same(_run_generated(py, case.make_inputs()), expected)
    return (OK, "") if why is None else (MISMATCH, why)


def run_one(args) -> tuple[str, str, str, str]:
    case_id, timeout = args
    from pnnx_op_cases.registry import get_case

    case = get_case(case_id)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        status, why = _check(case)
    except BaseException as err:  # noqa: BLE001 - a sweep records every failure and goes on
        if isinstance(err, KeyboardInterrupt):
            raise
        lines = str(err).strip().splitlines()
        status, why = ERROR, f"{type(err).__name__}: {lines[0] if lines else ''}"
    finally:
        signal.alarm(0)
    return case.id, case.table, status, why[:200]


def report(results) -> None:
    tables = collections.defaultdict(collections.Counter)
    failures = collections.defaultdict(list)
    for case_id, table, status, why in results:
        tables[table][status] += 1
        tables["ALL"][status] += 1
        if status in (MISMATCH, ERROR):
            failures[f"[{status}] {why}"].append(case_id)
    print(f"{'table':<12}{'cases':>7}{OK:>7}{MISMATCH:>10}{ERROR:>7}{SKIPPED:>9}")
    for table in sorted(tables, key=lambda t: (t == "ALL", t)):
        c = tables[table]
        print(f"{table:<12}{sum(c.values()):>7}{c[OK]:>7}{c[MISMATCH]:>10}{c[ERROR]:>7}{c[SKIPPED]:>9}")
    print()
    for why, ids in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(ids):4d} {why}")
        for case_id in sorted(ids):
            print(f"       {case_id}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=60, help="seconds per case")
    parser.add_argument("--table", help="only this table (nn, F, Tensor, torch, ...)")
    parser.add_argument("--op", help="only this op (table row)")
    args = parser.parse_args(argv)
    from pnnx_op_cases.registry import all_cases

    cases = [c for c in all_cases() if (not args.table or c.table == args.table) and (not args.op or c.op == args.op)]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=200) as pool:
        results = list(pool.imap_unordered(run_one, [(c.id, args.timeout) for c in cases], chunksize=4))
    report(results)
    print(f"\n{len(results)} cases in {time.perf_counter() - start:.0f} s with {args.jobs} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
