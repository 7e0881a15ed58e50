"""Benchmark: zoo models converted by ours and by upstream `pnnx`, side by side.

Per model: whole-process conversion time (ours: a fresh Python process building the zoo
model and calling `pnnx_reference.api.export`; upstream: a fresh process tracing it to a
.pt, then the `pnnx` command; runs alternate, medians and the ratio), artefact sizes,
operator count in pnnx.param, ncnn layer count, ncnn CPU latency of both ncnn models (same
ncnn package, same process, alternating, median) and onnxruntime latency of our pnnx.onnx
against `torch.onnx.export` of the same model. Writes reports/bench.json.

    python benchmarks/bench_zoo.py [--models resnet18,mobilenet_v2] [--repeat 3] [--runs 20]

Every zoo model by default (long: minutes per model); `--models` picks a subset.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_convert  # noqa: E402  (the scripts beside this one are not a package)
import bench_ncnn  # noqa: E402
import bench_onnx  # noqa: E402

from pnnx_conformance.converters.case_files import inputshape_arg  # noqa: E402
from pnnx_conformance.report.bench import lookup as _get  # noqa: E402
from pnnx_model_zoo.converters import upstream_args  # noqa: E402
from pnnx_model_zoo.run import select_for_cli  # noqa: E402
OURS = """
import sys, warnings
warnings.filterwarnings("ignore")
from pnnx_model_zoo.zoo import all_cases as zoo_cases
from pnnx_reference.api import export
case = {c.id: c for c in zoo_cases()}[sys.argv[1]]
export(case.make_model(), case.make_inputs(), sys.argv[2], "model", **case.options)
"""


def convert_ours(case, folder: Path) -> float:
    start = time.perf_counter()
    bench_convert._run([sys.executable, "-c", OURS, case.id, str(folder)], folder)
    return time.perf_counter() - start


def convert_upstream(case, folder: Path, extra: list[str]) -> float:
    start = time.perf_counter()
    bench_convert._run([sys.executable, "-c", bench_convert.ZOO_TRACE, case.id, str(folder / "model.pt")], folder)
    bench_convert._run([str(bench_convert.BIN / "pnnx"), "model.pt", inputshape_arg(case), *extra], folder)
    return time.perf_counter() - start


def conversion_times(case, repeat: int, folders: dict[str, Path]) -> dict:
    """Alternating whole-process conversions (ours first on even rounds); the artefacts of
    the last round stay in `folders`. A converter that fails is recorded and not re-run."""
    extra = upstream_args(case, case.make_model()) if case.options else []
    runners = [("ours", lambda f: convert_ours(case, f)), ("upstream", lambda f: convert_upstream(case, f, extra))]
    times, errors = {"ours": [], "upstream": []}, {}
    for i in range(repeat):
        for key, runner in runners if i % 2 == 0 else reversed(runners):
            if key in errors:
                continue
            for old in folders[key].iterdir():
                old.unlink()
            try:
                times[key].append(runner(folders[key]))
            except SystemExit as e:
                errors[key] = bench_convert.first_error_line(e)
    med = {k: statistics.median(v) if v else None for k, v in times.items()}
    ratio = med["ours"] / med["upstream"] if None not in med.values() else None
    return {"runs_s": times, "median_s": med, "ratio_ours_over_upstream": ratio, "errors": errors}


def param_ops(path: Path) -> int | None:
    """Operator count in a pnnx.param / ncnn.param header (line 2: operators operands)."""
    return int(path.read_text().splitlines()[1].split()[0]) if path.is_file() else None


def sizes(folder: Path) -> dict[str, int]:
    return {p.name.removeprefix("model").lstrip("._"): p.stat().st_size for p in sorted(folder.iterdir())
            if p.is_file() and p.name.startswith("model") and p.suffix != ".pt"}


def ncnn_latency(bases: dict[str, Path], x, runs: int, threads: int) -> dict:
    runners, missing = {}, {}
    for k, base in bases.items():
        try:
            runners[k] = bench_ncnn.Runner(base, threads)
        except RuntimeError as e:  # no ncnn.param, or one ncnn cannot load (e.g. a custom layer)
            missing[k] = str(e).replace(str(base.parent.parent), "<work>")  # no temp paths in reports
    times = {k: [] for k in runners}
    for run in runners.values():  # warm-up
        run(x)
    for i in range(runs):
        order = list(runners.items()) if i % 2 == 0 else list(reversed(runners.items()))
        for k, run in order:
            times[k].append(bench_ncnn.timed(run, x))
    return {**{k: 1000 * statistics.median(v) for k, v in times.items()}, **({"errors": missing} if missing else {})}


def onnx_latency(case, ours_onnx: Path, runs: int) -> dict:
    import onnx

    models = {"pnnx.onnx": onnx.load(str(ours_onnx))}
    inputs = case.make_inputs()
    models["torch.onnx"] = bench_onnx.torch_export(case.make_model(), inputs[0])
    ms = bench_onnx.latency(models, inputs[0].numpy(), runs)
    return {"median_ms": ms, "nodes": {k: len(m.graph.node) for k, m in models.items()}}


def attempt(record: dict, key: str, fn):
    """Store fn() under `key`, or the first line of its error: one step failing must not
    hide the others' numbers."""
    try:
        record[key] = fn()
    except BaseException as e:  # SystemExit from bench_convert._run included
        if isinstance(e, KeyboardInterrupt):
            raise
        record[key] = {"error": bench_convert.first_error_line(e)}


def bench_model(case, repeat: int, runs: int, threads: int) -> dict:
    record = {"model": case.op.removeprefix("models."), "case": case.id}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {k: Path(tmp, k) for k in ("ours", "upstream")}
        for f in folders.values():
            f.mkdir()
        attempt(record, "convert", lambda: conversion_times(case, repeat, folders))
        bases = {k: f / "model" for k, f in folders.items()}
        record["sizes"] = {k: sizes(f) for k, f in folders.items()}
        record["pnnx_param_ops"] = {k: param_ops(Path(f"{b}.pnnx.param")) for k, b in bases.items()}
        record["ncnn_layers"] = {k: param_ops(Path(f"{b}.ncnn.param")) for k, b in bases.items()}
        x = case.make_inputs()[0].numpy()
        attempt(record, "ncnn_cpu_ms", lambda: ncnn_latency(bases, x, runs, threads))
        attempt(record, "onnxruntime", lambda: onnx_latency(case, Path(f"{bases['ours']}.pnnx.onnx"), runs))
    return record


def machine() -> dict:
    import ncnn
    import onnxruntime
    import torch

    return {"cpus": os.cpu_count(), "loadavg_1_5_15": list(os.getloadavg()), "python": platform.python_version(),
            "torch": torch.__version__, "ncnn": ncnn.__version__, "onnxruntime": onnxruntime.__version__,
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _pair(r: dict, key: tuple, a: str, b: str, spec: str) -> str:
    return f"{_fmt(_get(r, *key, a), spec)}/{_fmt(_get(r, *key, b), spec)}"


def _kb(r: dict, who: str):
    size = _get(r, "sizes", who, "ncnn.bin")
    return None if size is None else size / 1024


def print_table(records: list[dict]) -> None:
    print(f"{'model':20} {'convert s ours/up':>18} {'ratio':>6} {'pnnx ops':>9} {'ncnn layers':>11} "
          f"{'ncnn.bin KB':>13} {'ncnn ms ours/up':>16} {'ort ms ours/torch':>18}")
    for r in records:
        print(f"{r['model']:20} {_pair(r, ('convert', 'median_s'), 'ours', 'upstream', '.1f'):>18} "
              f"{_fmt(_get(r, 'convert', 'ratio_ours_over_upstream'), '.2f'):>6} "
              f"{_pair(r, ('pnnx_param_ops',), 'ours', 'upstream', 'd'):>9} "
              f"{_pair(r, ('ncnn_layers',), 'ours', 'upstream', 'd'):>11} "
              f"{_fmt(_kb(r, 'ours'), '.0f') + '/' + _fmt(_kb(r, 'upstream'), '.0f'):>13} "
              f"{_pair(r, ('ncnn_cpu_ms',), 'ours', 'upstream', '.2f'):>16} "
              f"{_pair(r, ('onnxruntime', 'median_ms'), 'pnnx.onnx', 'torch.onnx', '.2f'):>18}")
        for key in ("convert", "ncnn_cpu_ms"):
            for who, why in (_get(r, key, "errors") or {}).items():
                print(f"    {key} {who}: {why}")
        for key in ("convert", "ncnn_cpu_ms", "onnxruntime"):
            if _get(r, key, "error"):
                print(f"    {key}: {r[key]['error']}")


def bench_all(cases, repeat: int, runs: int, threads: int, bench=bench_model) -> list[dict]:
    """Each case in turn, with a progress line (model, its seconds, the total) on stderr."""
    records, began = [], time.monotonic()
    for i, case in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.id} ...", file=sys.stderr, flush=True)
        start = time.monotonic()
        records.append(bench(case, repeat, runs, threads))
        now = time.monotonic()
        print(f"[{i}/{len(cases)}] {case.id} done in {now - start:.0f} s ({now - began:.0f} s elapsed)",
              file=sys.stderr, flush=True)
    return records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated zoo model names or patterns (default: every zoo model)")
    ap.add_argument("--repeat", type=int, default=3, help="whole-process conversions of each converter")
    ap.add_argument("--runs", type=int, default=20, help="timed inferences per runtime")
    ap.add_argument("--threads", type=int, default=1, help="ncnn CPU threads")
    ap.add_argument("--out", type=Path, default=Path("reports/bench.json"))
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    cases = select_for_cli(args.models)
    if cases is None:
        return 2
    if args.repeat < 1 or args.runs < 1:
        print("error: --repeat and --runs must be at least 1", file=sys.stderr)
        return 2
    env = machine()
    records = bench_all(cases, args.repeat, args.runs, args.threads)
    env["loadavg_after"] = list(os.getloadavg())
    report = {"machine": env, "repeat": args.repeat, "runs": args.runs, "ncnn_threads": args.threads,
              "models": records}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n")
    tmp.replace(args.out)
    print(f"load average {env['loadavg_1_5_15']} before, {env['loadavg_after']} after; {env['cpus']} CPUs")
    print_table(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
