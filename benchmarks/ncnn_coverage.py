"""ncnn export coverage over the op cases: capture each case (weights and inputs rounded through
fp16 first, so fp16 weight storage is exact), lower with write_ncnn(fp16=True), run in ncnn and
compare with torch eager on the same rounded model within 1e-3 abs/rel (the residue is
accumulation order).

    .tox/env/bin/python benchmarks/ncnn_coverage.py [--tier smoke|full] [--table nn] [--pattern 'nn.Conv*']
        [--mode fp32|vulkan] [--workers 2] [--timeout 60] [--json out.json] [--show-failures]

Per table it prints: rows upstream marks "export to ncnn" (1 or *), rows where at least one case
is lowered and passes parity (and how many of those upstream marks), and cases passing / lowered /
unsupported / failing; then the most common reasons a case cannot be lowered or fails.
Each case runs in a worker process (2 by default); a case that crashes ncnn or runs past the
timeout is recorded as such and the worker is replaced.
"""
from __future__ import annotations

import argparse
import csv
import json
import multiprocessing as mp
import queue
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ATOL = RTOL = 1e-3
BATCH_REFUSAL = "no batch axis"  # in the message of a case refused for its batch size
NO_BATCH = 233
# outcome of one case
PASS, MISMATCH, UNSUPPORTED, ERROR, SKIPPED, CRASH = "pass", "mismatch", "unsupported", "error", "skipped", "crash"


# --------------------------------------------------------------------------- one case (worker)

def _rounded(case):
    import torch

    model = case.make_model().half().float().eval()
    inputs = [t.half().float() if t.dtype == torch.float32 else t for t in case.make_inputs()]
    return model, inputs


def _eager(model, inputs):
    import torch

    with torch.no_grad():
        out = model(*inputs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _run_ncnn(base: str, inputs, n_out: int, mode: str):
    import ncnn
    import numpy as np
    import torch

    net = ncnn.Net()
    for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage"):
        setattr(net.opt, flag, False)
    net.opt.use_vulkan_compute = mode == "vulkan"
    net.opt.num_threads = 1
    if net.load_param(f"{base}.ncnn.param") or net.load_model(f"{base}.ncnn.bin"):
        raise RuntimeError("ncnn cannot load the exported files")
    from pnnx_conformance.backends.ncnn_backend import declared_batch_indices, declared_value_feeds

    declared = declared_batch_indices(f"{base}_ncnn.py")  # the batch index of each in<i> / out<i>
    as_values = declared_value_feeds(f"{base}_ncnn.py")  # integer inputs fed as float values
    ex = net.create_extractor()
    for i, t in enumerate(inputs):
        # bools are float 0/1 blobs; other integers float values, or int32 words where Embed reads them
        as_float = t.dtype == torch.bool or f"in{i}" in as_values
        t = t.float() if as_float else t if t.is_floating_point() else t.to(torch.int32)
        t = t.reshape(1) if t.dim() == 0 else t  # a 0-d input is a 1-element blob
        ex.input(f"in{i}", ncnn.Mat(t.float().numpy() if t.is_floating_point() else t.numpy(),
                                    batch_index=declared.get(f"in{i}", NO_BATCH)).clone())
    outs = []
    for i in range(n_out):
        ret, mat = ex.extract(f"out{i}")
        if ret != 0:
            raise RuntimeError(f"ncnn extract out{i} returned {ret}")
        outs.append(np.array(mat.numpy(batch_index=declared.get(f"out{i}", NO_BATCH))).copy())
    del ex
    net.clear()
    return outs


def _compare(got, expected) -> str | None:
    """None when every output matches. ncnn blobs have no batch axis and at most 4 dims, so
    shapes are compared with size-1 axes dropped; the element order must agree."""
    import numpy as np
    import torch

    if len(got) != len(expected):
        return f"{len(got)} outputs, torch has {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        e = torch.view_as_real(e.detach()) if e.is_complex() else e  # ncnn holds (..., 2) pairs
        e = e.detach().double().numpy()
        g = np.asarray(g, dtype=np.float64)
        e = np.asarray(e, dtype=np.float64)
        if tuple(d for d in g.shape if d != 1) != tuple(d for d in e.shape if d != 1):
            return f"out{i} shape {g.shape}, torch {e.shape}"
        g, e = g.reshape(-1), e.reshape(-1)
        bad = ~np.isclose(g, e, atol=ATOL, rtol=RTOL, equal_nan=True)
        if bad.any():
            return f"out{i}: {int(bad.sum())}/{bad.size} differ, max abs {float(np.abs(g - e)[bad].max()):.3g}"
    return None


def batch1_variant(case):
    """The case with dim 0 of every input of rank >= 2 set to 1 (ncnn has no batch axis), or
    None when no input changes. Only meaningful for models that do not fix the batch size."""
    import dataclasses

    specs = tuple(dataclasses.replace(s, shape=(1, *s.shape[1:])) if len(s.shape) >= 2 else s
                  for s in case.inputs)
    if specs == case.inputs:
        return None
    return dataclasses.replace(case, inputs=specs)


def run_case(case_id: str, mode: str, folder: str, batch1: bool = False) -> dict:
    """Outcome of one case; with batch1, of its batch-1 variant (see batch1_variant)."""
    import torch
    from pnnx_op_cases.case import TAG_RANDOM, TAG_TRAINING_ONLY, TAG_NO_TRACE
    from pnnx_op_cases.registry import get_case
    from pnnx_reference.api import capture
    from pnnx_reference.emit.ncnn import write_ncnn
    from pnnx_reference.errors import PnnxError, UnsupportedOperator

    case = get_case(case_id)
    if batch1:
        case = batch1_variant(case)
        if case is None:
            return {"outcome": SKIPPED, "reason": "no input of rank >= 2"}
    for tag in (TAG_RANDOM, TAG_NO_TRACE):
        if tag in case.tags:
            return {"outcome": SKIPPED, "reason": f"tagged {tag}"}
    torch.manual_seed(0)
    try:
        model, inputs = _rounded(case)
        expected = _eager(model, inputs)
    except Exception as err:
        return {"outcome": SKIPPED if batch1 else ERROR, "reason": f"eager: {_first_line(err)}"}
    try:
        graph = capture(model, tuple(inputs))
    except Exception as err:  # capture is another team's area: record, do not stop the sweep
        return {"outcome": ERROR, "reason": f"capture: {type(err).__name__}: {_first_line(err)}"}
    base = str(Path(folder) / (case.safe_name + ("_b1" if batch1 else "")))
    try:
        write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=True)
    except UnsupportedOperator as err:
        failures = getattr(err, "failures", [(err.__class__.__name__, "", str(err))])
        return {"outcome": UNSUPPORTED, "reason": _first_line(err),
                "reasons": [f"{t}: {_generalise(r)}" for t, _, r in failures]}
    except PnnxError as err:
        return {"outcome": UNSUPPORTED, "reason": _first_line(err), "reasons": [_generalise(_first_line(err))]}
    except Exception as err:
        return {"outcome": ERROR, "reason": f"write_ncnn: {type(err).__name__}: {_first_line(err)}"}
    try:
        got = _run_ncnn(base, inputs, len(expected), mode)
    except Exception as err:
        return {"outcome": ERROR, "reason": f"ncnn: {_first_line(err)}"}
    bad = _compare(got, expected)
    if bad is None:
        return {"outcome": PASS}
    if TAG_TRAINING_ONLY in case.tags:
        return {"outcome": SKIPPED, "reason": f"tagged {TAG_TRAINING_ONLY}: {bad}"}
    return {"outcome": MISMATCH, "reason": bad}


def _first_line(err) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def _generalise(reason: str) -> str:
    """Fold case-specific numbers and names out of a reason so that reasons can be counted."""
    reason = re.sub(r"\(\s*-?\d+(\s*,\s*-?\d+)*\s*,?\s*\)", "(..)", reason)
    reason = re.sub(r"\[\s*-?\d+(\s*,\s*-?\d+)*\s*\]", "[..]", reason)
    return re.sub(r"-?\d+(\.\d+)?", "N", reason)[:160]


def _worker(tasks, results, mode: str, folder: str) -> None:
    import os
    import warnings

    warnings.filterwarnings("ignore")
    while True:
        try:
            case_id, batch1 = task = tasks.get_nowait()
        except queue.Empty:
            return
        results.put(("start", task, os.getpid()))
        try:
            result = run_case(case_id, mode, folder, batch1)
        except BaseException as err:  # noqa: BLE001  one case must not stop the sweep
            result = {"outcome": ERROR, "reason": f"{type(err).__name__}: {_first_line(err)}"}
        results.put(("done", task, result))


# --------------------------------------------------------------------------- the sweep (parent)

def sweep(case_ids: list, mode: str, workers: int, timeout: float, progress: bool) -> dict:
    """case_ids: (case id, batch1) tasks; returns task -> outcome record."""
    ctx = mp.get_context("fork")
    tasks, results = ctx.Queue(), ctx.Queue()
    for cid in case_ids:
        tasks.put(cid)
    folder = tempfile.mkdtemp(prefix="ncnn_coverage_")
    done: dict[str, dict] = {}
    procs: dict[int, list] = {}  # pid -> [process, current case, start time]

    def spawn():
        p = ctx.Process(target=_worker, args=(tasks, results, mode, folder), daemon=True)
        p.start()
        procs[p.pid] = [p, None, 0.0]

    for _ in range(workers):
        spawn()
    owner: dict[str, int] = {}
    while len(done) < len(case_ids):
        try:
            kind, cid, result = results.get(timeout=0.5)
        except queue.Empty:
            kind = None
        if kind == "start":
            owner[cid] = pid = result
            if pid in procs:
                procs[pid][1:] = [cid, time.time()]
        elif kind == "done":
            done[cid] = result
            pid = owner.pop(cid, None)
            if pid in procs and procs[pid][1] == cid:
                procs[pid][1] = None
            if progress and len(done) % 50 == 0:
                print(f"  {len(done)}/{len(case_ids)}", file=sys.stderr, flush=True)
        _reap(procs, done, timeout, spawn, tasks)
        if not procs and len(done) < len(case_ids) and tasks.empty() and results.empty():
            break
    for p, _, _ in procs.values():
        p.kill()
    for cid in case_ids:
        done.setdefault(cid, {"outcome": CRASH, "reason": "worker died"})
    return done


def _reap(procs, done, timeout, spawn, tasks) -> None:
    for pid, (p, cur, started) in list(procs.items()):
        over = cur is not None and time.time() - started > timeout
        if p.is_alive() and not over:
            continue
        if over:
            p.kill()
        p.join(1)
        del procs[pid]
        # a clean exit (code 0) means its last result is still on its way through the queue
        if cur is not None and cur not in done and (over or p.exitcode != 0):
            done[cur] = {"outcome": CRASH, "reason": "timeout" if over else f"worker exit code {p.exitcode}"}
        if not tasks.empty():
            spawn()


# --------------------------------------------------------------------------- the report

def upstream_marks() -> dict[str, dict[str, bool]]:
    """table -> {row: upstream marks export to ncnn}."""
    import pnnx_op_cases

    folder = Path(pnnx_op_cases.__file__).parent / "tables"
    marks: dict[str, dict[str, bool]] = {}
    for tsv in sorted(folder.glob("*.tsv")):
        with open(tsv, newline="") as f:
            rows = csv.DictReader(f, delimiter="\t")
            marks[tsv.stem] = {r["op"]: r["upstream_export_to_ncnn"].strip() in ("1", "*") for r in rows}
    return marks


def summarise(cases, results: dict[str, dict], variants: dict[str, dict]) -> dict:
    """Per table counts; `variants` holds the outcome of batch-1 variants of cases refused for
    their batch size, counted apart (columns b1_*)."""
    marks = upstream_marks()
    per_row: dict[str, Counter] = defaultdict(Counter)
    per_row_b1: dict[str, Counter] = defaultdict(Counter)
    for case in cases:
        per_row[case.op][results[case.id]["outcome"]] += 1
        if case.id in variants:
            per_row_b1[case.op][variants[case.id]["outcome"]] += 1
    tables = {}
    for table in sorted({c.table for c in cases}):
        rows = {c.op for c in cases if c.table == table}
        marked = {r for r, m in marks.get(table, {}).items() if m}
        passing = {r for r in rows if per_row[r][PASS]}
        passing_b1 = passing | {r for r in rows if per_row_b1[r][PASS]}
        counts, counts_b1 = Counter(), Counter()
        for r in rows:
            counts.update(per_row[r])
            counts_b1.update(per_row_b1[r])
        lowered = counts[PASS] + counts[MISMATCH] + counts[ERROR] + counts[CRASH]
        tables[table] = {
            "rows_with_cases": len(rows), "upstream_marked": len(marked),
            "upstream_marked_with_cases": len(marked & rows),
            "rows_passing": len(passing), "marked_rows_passing": len(marked & passing),
            "rows_passing_b1": len(passing_b1), "marked_rows_passing_b1": len(marked & passing_b1),
            "marked_rows_missing": sorted((marked & rows) - passing_b1),
            "cases": sum(counts.values()), "pass": counts[PASS], "lowered": lowered,
            "unsupported": counts[UNSUPPORTED], "mismatch": counts[MISMATCH], "error": counts[ERROR],
            "crash": counts[CRASH], "skipped": counts[SKIPPED],
            "b1_variants": sum(counts_b1.values()), "b1_pass": counts_b1[PASS],
            "b1_fail": counts_b1[MISMATCH] + counts_b1[ERROR] + counts_b1[CRASH] + counts_b1[UNSUPPORTED],
        }
    return tables


def print_report(tables: dict, results: dict[str, dict], variants: dict[str, dict], top: int,
                 show_failures: bool, mode: str) -> None:
    print(f"ncnn {mode} parity (fp16 weights, fp16-rounded model and inputs, {ATOL:g} abs/rel)")
    head = ("table", "marked", "marked*", "rows_pass", "marked_pass", "+b1_rows", "+b1_marked",
            "pass", "lowered", "unsup", "mismatch", "error", "crash", "skip", "b1_pass", "b1_fail")
    print("  ".join(f"{h:>11}" for h in head))
    total = Counter()
    for table, t in tables.items():
        vals = (t["upstream_marked"], t["upstream_marked_with_cases"], t["rows_passing"],
                t["marked_rows_passing"], t["rows_passing_b1"], t["marked_rows_passing_b1"], t["pass"],
                t["lowered"], t["unsupported"], t["mismatch"], t["error"], t["crash"], t["skipped"],
                t["b1_pass"], t["b1_fail"])
        total.update(dict(zip(head[1:], vals)))
        print("  ".join(f"{v:>11}" for v in (table, *vals)))
    print("  ".join(f"{v:>11}" for v in ("all", *(total[h] for h in head[1:]))))
    print("(marked: rows upstream marks 'export to ncnn'; marked*: those with cases here; "
          "lowered: cases that produced ncnn files;\n +b1_*: rows passing when cases refused for "
          "batch > 1 are rerun with dim 0 of each input set to 1; b1_pass/b1_fail: those reruns)")
    _print_reasons("unsupported (per operator)", [r for res in results.values()
                                                  if res["outcome"] == UNSUPPORTED
                                                  for r in set(res.get("reasons", [res["reason"]]))], top)
    for outcome in (MISMATCH, ERROR, CRASH):
        _print_reasons(outcome, [_generalise(res["reason"]) for res in results.values()
                                 if res["outcome"] == outcome], top)
    _print_reasons("batch-1 variant failures", [_generalise(res["reason"]) for res in variants.values()
                                                if res["outcome"] not in (PASS, SKIPPED)], top)
    if show_failures:
        for label, group in (("", results), ("b1 ", variants)):
            for cid, res in sorted(group.items()):
                if res["outcome"] not in (PASS, SKIPPED):
                    print(f"  {label}{res['outcome']:<11} {cid}: {res.get('reason', '')}")
    for table, t in tables.items():
        if t["marked_rows_missing"]:
            print(f"{table}: marked rows not passing: {', '.join(t['marked_rows_missing'])}")


def _print_reasons(title: str, reasons: list[str], top: int) -> None:
    if not reasons:
        return
    print(f"most common {title}:")
    for reason, n in Counter(reasons).most_common(top):
        print(f"  {n:>5}  {reason}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tier", choices=("smoke", "full"), default="smoke")
    ap.add_argument("--table")
    ap.add_argument("--pattern")
    ap.add_argument("--mode", choices=("fp32", "vulkan"), default="fp32")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json")
    ap.add_argument("--show-failures", action="store_true")
    args = ap.parse_args(argv)

    from pnnx_op_cases.registry import select

    cases = select(tier=args.tier, table=args.table, pattern=args.pattern)
    start = time.time()
    done = sweep([(c.id, False) for c in cases], args.mode, args.workers, args.timeout, progress=True)
    results = {cid: res for (cid, _), res in done.items()}
    refused = [cid for cid, res in results.items()
               if res["outcome"] == UNSUPPORTED and BATCH_REFUSAL in res["reason"]]
    done = sweep([(cid, True) for cid in refused], args.mode, args.workers, args.timeout, progress=True)
    variants = {cid: res for (cid, _), res in done.items()}
    tables = summarise(cases, results, variants)
    print_report(tables, results, variants, args.top, args.show_failures, args.mode)
    print(f"{len(cases)} cases, {len(variants)} batch-1 variants in {time.time() - start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"tables": tables, "cases": results, "batch1_variants": variants},
                                              indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
