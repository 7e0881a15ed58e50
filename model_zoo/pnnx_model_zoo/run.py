"""Every zoo model through the conformance harness: convert with the reference converter
(from Python, from the traced .pt with `pnnxref` and no inputshape, from the .pt2, and from
the torch.onnx export with `pnnxref case.onnx`; each command line in a fork-server child), and
with upstream `pnnx` side by side, check parity on each backend, print a table
and write JSON-lines `Result` records (table `models`) and run.json (tier, cases, jobs, wall time).

    python -m pnnx_model_zoo.run [--models PATTERN] [--out DIR] [--no-upstream] [--no-onnx] [--jobs N]

PATTERN: fnmatch patterns on case ids, or bare model names, comma-separated
(`resnet18,mobilenet_v2`, `models.*lstm*`); `sweep` is the torchvision sweep (sweep.py),
`transformers` the transformers tier (hf.py), `all` all of them. Without a pattern: the zoo.
"""
from __future__ import annotations

import argparse
import fnmatch
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

from pnnx_conformance.pool import Stream, run_streams
from pnnx_conformance.results import PASSING, Result, write_results
from pnnx_conformance.runinfo import run_info, write_run_info
from pnnx_conformance.units import Unit
from pnnx_conformance.worker import WorkerConfig
from pnnx_reference.errors import UsageError

from .zoo import all_cases, zoo_cases

PROVIDER = "pnnx_model_zoo.zoo:all_cases"
RESULTS = "results.jsonl"
# short name (as the reports show it) -> the spec the harness loads
CONVERTERS = {"reference": "pnnx_model_zoo.converters:ZooReference",
              "reference-pt": "pnnx_model_zoo.converters:ZooReferencePt",
              "reference-export": "pnnx_model_zoo.converters:ZooReferenceExport",
              "upstream": "pnnx_model_zoo.converters:ZooUpstream",
              "reference-onnx": "pnnx_model_zoo.converters:ZooReferenceOnnx"}
# (backend entry-point name, precision) per parity check: fp32 everywhere, and ncnn also in its
# default options and Vulkan fp16, compared at network level (see tolerances.OP_OVERRIDES)
MODES = (("torch", "fp32"), ("pnnx-python", "fp32"), ("onnxruntime", "fp32"), ("ncnn-cpu", "fp32"),
         ("ncnn-cpu", "default"), ("ncnn-vulkan", "fp32"), ("ncnn-vulkan", "fp16"))
# the .pt route's and upstream's artefacts go through the same backends (the torch oracle
# needs no converter): the models table compares the converters side by side
UPSTREAM_MODES = MODES[1:]
PT_MODES = UPSTREAM_MODES


def select(patterns: str | None) -> list:
    """Zoo cases matching any of the comma-separated patterns (all when none)."""
    if not patterns:
        return list(zoo_cases())
    names = [p for p in patterns.split(",") if p]
    globs = [p if any(ch in p for ch in "*?[./") else f"models.{p}/*" for p in names]
    chosen = [c for c in all_cases() if "all" in names or ("sweep" in names and c.sweep)
              or ("transformers" in names and c.transformers) or any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    if not chosen:
        known = ", ".join(c.op.removeprefix("models.") for c in all_cases())
        raise UsageError(f"no zoo model matches {patterns!r} (known: {known})")
    return chosen


def select_for_cli(patterns: str | None) -> list | None:
    """select() for a command line: None, after one line on stderr, for an unknown model."""
    try:
        return select(patterns)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return None


def tier_of(cases) -> str:
    """The smallest conformance tier holding every case (smoke cases are in full too)."""
    return "smoke" if all(c.tier == "smoke" for c in cases) else "full"


def plan(cases, upstream: bool = True, onnx: bool = True) -> list[Unit]:
    """Per case and converter: the conversion, then parity on every backend."""
    units = []
    for case in cases:
        for name, modes in (("reference", MODES), ("reference-pt", PT_MODES), ("reference-export", MODES)):
            units.append(Unit(case.id, CONVERTERS[name], "convert"))
            units += [Unit(case.id, CONVERTERS[name], "parity", b, p) for b, p in modes]
        if upstream:
            up = CONVERTERS["upstream"]
            units.append(Unit(case.id, up, "convert"))
            units += [Unit(case.id, up, "parity", b, p) for b, p in UPSTREAM_MODES]
        if onnx:  # the ONNX route: torch.onnx.export, then our ONNX frontend
            route = CONVERTERS["reference-onnx"]
            units.append(Unit(case.id, route, "convert"))
            units += [Unit(case.id, route, "parity", b, p) for b, p in UPSTREAM_MODES]
    return units


def short_names(result: Result) -> Result:
    """Records name converters as the reports know them, not by plug-in spec."""
    result.converter = {v: k for k, v in CONVERTERS.items()}.get(result.converter, result.converter)
    return result


def run_zoo(cases, out: Path, *, upstream: bool = True, onnx: bool = True, jobs: int = 1, timeout_s: float = 900.0,
            keep_artefacts: bool = False, on_result=None) -> list[Result]:
    """Run the plan in harness workers; write OUT/results.jsonl and OUT/run.json; return the records."""
    zoo = ZooRun(cases, out, upstream=upstream, onnx=onnx, jobs=jobs, timeout_s=timeout_s,
                 keep_artefacts=keep_artefacts, on_result=on_result)
    try:
        run_streams([zoo.stream], jobs)
    finally:
        zoo.finish()
    return zoo.results


class ZooRun:
    """The zoo's units as a harness stream (`pnnx-conformance run --zoo OUT` runs them in the
    suite's worker slots); `finish()` writes OUT/results.jsonl and OUT/run.json."""

    def __init__(self, cases, out: Path, *, upstream: bool = True, onnx: bool = True, jobs: int = 1,
                 timeout_s: float = 900.0, keep_artefacts: bool = False, on_result=None) -> None:
        self.began = time.monotonic()
        self.cases, self.out, self.jobs, self.keep_artefacts = list(cases), Path(out), jobs, keep_artefacts
        self.out.mkdir(parents=True, exist_ok=True)
        self.workroot = self.out / "artefacts" if keep_artefacts else Path(tempfile.mkdtemp(prefix="pnnx-zoo-"))
        self.converters = ["reference", "reference-pt", "reference-export"] + (["upstream"] if upstream else []) + \
            (["reference-onnx"] if onnx else [])
        self.tier = {c.id: c.tier for c in self.cases}
        self.results: list[Result] = []
        self.on_result = on_result
        config = WorkerConfig(str(self.workroot), "full", PROVIDER, timeout_s)
        units = plan(self.cases, upstream, onnx)
        # a case's artefacts go once its last unit reports: a whole sweep keeps tens of GB otherwise
        self.pending = Counter(u.case for u in units)
        self.folders = {c.id: self.workroot / c.safe_name for c in self.cases}
        self.stream = Stream(units, config, self.collect)

    def collect(self, result: Result) -> None:
        result = short_names(result)
        result.tier = self.tier.get(result.case, result.tier)
        result.error = result.error.replace(str(self.workroot), "<work>")
        self.results.append(result)
        self.pending[result.case] -= 1
        if not self.keep_artefacts and self.pending[result.case] == 0:
            shutil.rmtree(self.folders[result.case], ignore_errors=True)
        self.last = time.monotonic()  # sharing a run's workers, the zoo is done at its last record
        if self.on_result:
            self.on_result(result)

    def finish(self) -> None:
        if not self.keep_artefacts:
            shutil.rmtree(self.workroot, ignore_errors=True)
        write_results(self.out / RESULTS, self.results)
        write_run_info(self.out, run_info("model_zoo", tier_of(self.cases), self.converters, len(self.cases),
                                          self.jobs, getattr(self, "last", time.monotonic()) - self.began))


def harness_run(out: Path, jobs: int, tier: str | None = None) -> ZooRun:
    """The zoo in a harness run's worker slots (`pnnx-conformance run --zoo OUT`, which names
    this function: the harness does not import the zoo); the torchvision sweep in the full tier."""
    return ZooRun(select("all" if tier == "full" else None), out, jobs=jobs)


COLUMNS = [("reference", "convert", None, None)] + [("reference", "parity", *m) for m in MODES] + \
          [("reference-pt", "convert", None, None)] + [("reference-pt", "parity", *m) for m in PT_MODES] + \
          [("reference-export", "convert", None, None)] + [("reference-export", "parity", *m) for m in MODES] + \
          [("upstream", "convert", None, None)] + [("upstream", "parity", *m) for m in UPSTREAM_MODES] + \
          [("reference-onnx", "convert", None, None)] + [("reference-onnx", "parity", *m) for m in UPSTREAM_MODES]


def _mode_name(mode: tuple[str, str]) -> str:
    backend, precision = mode
    return backend if precision == "fp32" else f"{backend} {precision}"


def cell(result: Result | None) -> str:
    if result is None:
        return "-"
    metrics = result.metrics if result.check == "parity" else None
    if metrics is not None and metrics.rel_l2 is not None:
        return f"{result.status} L2 {metrics.rel_l2:.1e}"
    if metrics is not None and metrics.max_abs is not None:
        return f"{result.status} {metrics.max_abs:.1e}"
    return result.status


def table(results: list[Result]) -> str:
    """Model x (converter, backend, precision): status and the error against torch (max abs,
    or relative L2 for the network-level fp16 checks)."""
    by_key = {(r.case, r.converter, r.check, r.backend, r.precision): r for r in results}
    heads = ["convert"] + [_mode_name(m) for m in MODES] + \
        [".pt convert"] + [f".pt {_mode_name(m)}" for m in PT_MODES] + \
        [".pt2 convert"] + [f".pt2 {_mode_name(m)}" for m in MODES] + \
        ["upstream convert"] + [f"upstream {_mode_name(m)}" for m in UPSTREAM_MODES] + \
        ["onnx convert"] + [f"onnx {_mode_name(m)}" for m in UPSTREAM_MODES]
    cases = sorted({r.case for r in results})
    width = max([len(c) for c in cases] + [5])
    lines = [f"{'model':{width}} " + " ".join(f"{h:>22}" for h in heads)]
    for case in cases:
        cells = [cell(by_key.get(key)) for key in ((case, *column) for column in COLUMNS)]
        lines.append(f"{case:{width}} " + " ".join(f"{c:>22}" for c in cells))
    return "\n".join(lines)


def failures(results: list[Result]) -> list[Result]:
    """Our routes' records that did not pass (upstream's are information, not our failures)."""
    return [r for r in results if r.converter.startswith("reference") and r.status not in PASSING]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pnnx_model_zoo.run", description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated model names or fnmatch patterns on case ids")
    ap.add_argument("--out", type=Path, default=Path("reports/models"), help="folder for results.jsonl")
    ap.add_argument("--no-upstream", action="store_true", help="skip the upstream pnnx converter")
    ap.add_argument("--no-onnx", action="store_true", help="skip the ONNX route (torch.onnx.export, then pnnxref)")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="worker processes")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per check (a conversion included)")
    ap.add_argument("--keep-artefacts", action="store_true", help="keep converted files under OUT/artefacts")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a reference check fails")
    ap.add_argument("--verbose", "-v", action="store_true", help="print each failure's first line")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    cases = select_for_cli(args.models)
    if cases is None:
        return 2
    start = time.monotonic()
    progress = (lambda r: print(f"  {r.case} {r.converter} {r.backend or r.check}: {r.status}", file=sys.stderr,
                                flush=True)) if args.verbose else None
    results = run_zoo(cases, args.out, upstream=not args.no_upstream, onnx=not args.no_onnx, jobs=args.jobs,
                      timeout_s=args.timeout,
                      keep_artefacts=args.keep_artefacts, on_result=progress)
    print(table(results))
    bad = failures(results)
    for r in bad if args.verbose else ():
        print(f"  {r.case} {r.backend or r.check}: {r.status}: {r.error}")
    print(f"{len(cases)} models, {len(results)} records, {len(bad)} reference failures, "
          f"{time.monotonic() - start:.0f} s; records in {args.out / RESULTS}")
    return 1 if args.strict and bad else 0


if __name__ == "__main__":
    sys.exit(main())
