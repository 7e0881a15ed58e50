"""ncnn run time of our ncnn files beside upstream pnnx's on the zoo networks, and of the fp16 paths.

Per zoo network: traced once to `model.pt`; `pnnxref model.pt OPTIONS` and `pnnx model.pt
OPTIONS` convert that same file (the same options: inputshape, the case's moduleop, fp16=1
weights as both default), each in a child process. Then each converter's ncnn.param/bin is
run on the CPU in a fresh child process per measurement: the conformance ncnn backend loads
the files with one thread and the mode's options, runs `--warmup` inferences, then `--runs`
timed ones and reports the median wall time and the median CPU time of the process (one
thread: CPU time is what the inference costs, wall time adds whatever else the machine ran).
`--rounds` such children per converter alternate ours, upstream, upstream, ours, ... so that
machine load hits both alike; a figure is the median of the children's medians, its noise the
spread of those medians (max - min over median, the larger of the two converters'). Ours is
"slower" where its CPU time exceeds upstream's by more than that noise.

Modes (`--modes`): `default` is ncnn.Net's own options (fp16 storage, packed and arithmetic
on; the main table), `fp32` turns every fp16/bf16 flag off, `fp16-storage` keeps fp16
storage and packing without fp16 arithmetic, `bf16-storage` stores bf16 instead, and
`vulkan` runs ncnn's Vulkan path at fp16 (here on lavapipe, a software rasteriser on the
same CPU: not a GPU figure).

    python benchmarks/bench_ncnn.py [MODELS] [--modes default,fp32] [--rounds 3] [--runs 10]
                                    [--out reports/speed/ncnn_runtime.md] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_convert  # noqa: E402  (the scripts beside this one are not a package)

CONVERTERS = ("ours", "upstream")
FP16 = ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic")
BF16 = ("use_bf16_packed", "use_bf16_storage")
# mode -> (backend, opt flags set after the backend configured ncnn.Net); {} keeps Net's defaults
MODES = {
    "default": ("ncnn-cpu", {}),
    "fp32": ("ncnn-cpu", dict.fromkeys(FP16 + BF16, False)),
    "fp16-storage": ("ncnn-cpu", {**dict.fromkeys(FP16, True), "use_fp16_arithmetic": False,
                                  **dict.fromkeys(BF16, False)}),
    "bf16-storage": ("ncnn-cpu", {**dict.fromkeys(FP16, False), **dict.fromkeys(BF16, True)}),
    "vulkan": ("ncnn-vulkan", {}),
}

MODE_NOTES = ("`default`: ncnn.Net's own options, fp16 storage, packing and arithmetic on; `fp32`: every fp16 "
              "and bf16 flag off; `fp16-storage`: fp16 storage and packing, fp32 arithmetic; `bf16-storage`: "
              "bf16 storage instead of fp16; `vulkan`: ncnn's Vulkan path at fp16, here lavapipe, a software "
              "rasteriser on the same CPU, not a GPU figure")

TIME_ONE = """
import json, statistics, sys, time
from pathlib import Path
import numpy as np
from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends import load_backend
folder, backend_name, flags, warmup, runs, save = sys.argv[1:7]
backend = load_backend(backend_name)
configure = backend.configure
def configured(net, precision):
    configure(net, precision)
    for key, value in json.loads(flags).items():
        setattr(net.opt, key, value)
backend.configure = configured
paths = {k: Path(folder, f"model{s}") for k, s in (("ncnn.param", ".ncnn.param"), ("ncnn.bin", ".ncnn.bin"),
                                                   ("ncnn.py", "_ncnn.py"), ("pnnx.param", ".pnnx.param"))}
backend.prepare(Artefacts("bench", "-", Path(folder), paths), "fp16" if backend.vulkan else "default")
feed = np.load(Path(folder).parent / "inputs.npz")
inputs = [feed[k] for k in sorted(feed.files, key=int)]
for _ in range(int(warmup)):
    outs = backend.run(inputs)
wall, cpu = [], []
for _ in range(int(runs)):
    start, start_cpu = time.perf_counter(), time.process_time()
    outs = backend.run(inputs)
    wall.append(1000 * (time.perf_counter() - start))
    cpu.append(1000 * (time.process_time() - start_cpu))
np.savez(save, **{str(i): y for i, y in enumerate(outs)})
print(json.dumps({"ms": wall, "cpu_ms": cpu}))
"""


def time_one(folder: Path, mode: str, warmup: int, runs: int) -> tuple[dict[str, float], Path]:
    """({"ms": median wall ms, "cpu_ms": median CPU ms}, outputs .npz) of one child process
    timing one converter's files in `mode`."""
    backend, flags = MODES[mode]
    save = folder / f"outputs_{mode}.npz"
    done = subprocess.run([sys.executable, "-c", TIME_ONE, str(folder), backend, json.dumps(flags),
                           str(max(warmup, 1)), str(runs), str(save)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        lines = [x for x in done.stderr.splitlines() if x.strip() and not x.startswith("[")]
        raise RuntimeError(f"exit {done.returncode}: {lines[-1][:160] if lines else ''}")
    times = json.loads(done.stdout.splitlines()[-1])
    return {k: statistics.median(v) for k, v in times.items()}, save


def convert(case, work: Path) -> dict[str, str]:
    """Trace the case to work/model.pt, convert it with both converters into work/ours and
    work/upstream; converter -> why it failed (empty when both wrote their files). Files a
    previous run left in `work` (`--work`) are used as they are."""
    from pnnx_conformance.converters.case_files import inputshape_arg
    from pnnx_model_zoo.converters import upstream_args

    if not (work / "model.pt").is_file():
        bench_convert._run([sys.executable, "-c", bench_convert.ZOO_TRACE, case.id, str(work / "model.pt")], work)
    options = [inputshape_arg(case), *(upstream_args(case, case.make_model()) if case.options else [])]
    errors = {}
    for key, exe in zip(CONVERTERS, ("pnnxref", "pnnx")):
        folder = work / key
        if (folder / "model.ncnn.param").is_file():
            continue
        folder.mkdir(exist_ok=True)
        if not (folder / "model.pt").exists():
            (folder / "model.pt").symlink_to(work / "model.pt")
        try:
            bench_convert._run([str(bench_convert.BIN / exe), "model.pt", *options], folder)
        except SystemExit as err:
            errors[key] = bench_convert.first_error_line(err)
        else:
            if not (folder / "model.ncnn.param").is_file():
                errors[key] = f"{exe} wrote no ncnn.param"
    return errors


def reference_outputs(case, work: Path) -> list[np.ndarray]:
    """The traced module's outputs on the case's inputs (saved for the children as inputs.npz)."""
    import torch

    inputs = case.make_inputs()
    np.savez(work / "inputs.npz", **{str(i): x.numpy() for i, x in enumerate(inputs)})
    with torch.no_grad():
        got = torch.jit.load(str(work / "model.pt"))(*inputs)
    return [t.numpy() for t in (got if isinstance(got, (tuple, list)) else (got,))]


def max_abs_diff(saved: Path, want: list[np.ndarray]) -> float | None:
    got = np.load(saved)
    outs = [got[k] for k in sorted(got.files, key=int)]
    if len(outs) != len(want) or any(g.size != w.size for g, w in zip(outs, want)):
        return None
    return max(float(np.abs(g.reshape(w.shape) - w).max()) for g, w in zip(outs, want))


def layer_types(param: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in param.read_text().splitlines()[2:]:
        counts[line.split()[0]] = counts.get(line.split()[0], 0) + 1
    return counts


def measure_mode(work: Path, keys: list[str], mode: str, rounds: int, warmup: int, runs: int,
                 want: list[np.ndarray]) -> dict:
    children: dict[str, list[dict]] = {k: [] for k in keys}
    errors, saved = {}, {}
    for r in range(rounds):
        for key in keys if r % 2 == 0 else reversed(keys):
            if key in errors:
                continue
            try:
                times, saved[key] = time_one(work / key, mode, warmup, runs)
                children[key].append(times)
            except (RuntimeError, subprocess.TimeoutExpired) as err:
                errors[key] = str(err).splitlines()[0]
    result = {"errors": errors}
    for key, got in children.items():
        if got:
            result[key] = {"max_abs_vs_torch": max_abs_diff(saved[key], want)}
            for what in ("ms", "cpu_ms"):
                values = [t[what] for t in got]
                mid = statistics.median(values)
                result[key].update({what: mid, f"children_{what}": values,
                                    f"noise_{what}": (max(values) - min(values)) / mid if mid else 0.0})
    return result


def bench_case(case, modes: list[str], rounds: int, warmup: int, runs: int, keep: Path | None = None) -> dict:
    """`keep`: the folder to convert in and leave the files in (a later run reuses them)."""
    record = {"model": case.op.removeprefix("models."), "case": case.id, "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) if keep is None else keep / record["model"]
        work.mkdir(parents=True, exist_ok=True)
        record["convert_errors"] = convert(case, work)
        keys = [k for k in CONVERTERS if k not in record["convert_errors"]]
        record["layers"] = {k: layer_types(work / k / "model.ncnn.param") for k in keys}
        want = reference_outputs(case, work)
        for mode in modes:
            record["modes"][mode] = measure_mode(work, keys, mode, rounds, warmup, runs, want)
    return record


def ratio(result: dict, what: str = "cpu_ms") -> float | None:
    if "ours" in result and "upstream" in result and result["upstream"][what]:
        return result["ours"][what] / result["upstream"][what]
    return None


def noise(result: dict, what: str = "cpu_ms") -> float | None:
    """The larger relative spread of the two converters' child medians."""
    if "ours" in result and "upstream" in result:
        return max(result["ours"][f"noise_{what}"], result["upstream"][f"noise_{what}"])
    return None


def verdict(result: dict) -> str:
    """'slower' when ours takes more CPU time than upstream by more than the noise."""
    r, n = ratio(result), noise(result)
    if r is None:
        return ""
    return "slower" if r - 1 > n else ("faster" if 1 - r > n else "same")


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _count(record: dict, key: str) -> str:
    return _fmt(sum(record["layers"][key].values()) if key in record["layers"] else None, "d")


def table(records: list[dict], mode: str) -> list[str]:
    lines = ["| network | layers ours/upstream | ours CPU ms | upstream CPU ms | ratio | noise | verdict | "
             "ours wall ms | upstream wall ms | wall ratio | max abs diff vs torch ours / upstream |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    ratios = []
    for rec in records:
        res = rec["modes"].get(mode)
        if res is None:
            continue
        ours, up = res.get("ours", {}), res.get("upstream", {})
        ratios += [ratio(res)] if ratio(res) else []
        lines.append(f"| {rec['model']} | {_count(rec, 'ours')}/{_count(rec, 'upstream')} | "
                     f"{_fmt(ours.get('cpu_ms'), '.2f')} | {_fmt(up.get('cpu_ms'), '.2f')} | "
                     f"{_fmt(ratio(res), '.2f')} | {_fmt(noise(res), '.0%')} | {verdict(res)} | "
                     f"{_fmt(ours.get('ms'), '.2f')} | {_fmt(up.get('ms'), '.2f')} | {_fmt(ratio(res, 'ms'), '.2f')} | "
                     f"{_fmt(ours.get('max_abs_vs_torch'), '.1e')} / {_fmt(up.get('max_abs_vs_torch'), '.1e')} |")
        for key, why in {**rec["convert_errors"], **res["errors"]}.items():
            lines.append(f"| {rec['model']}: {key} | {why} | | | | | | | | | |")
    if ratios:
        lines.append(f"| **median ratio** | | | | **{statistics.median(ratios):.2f}** | | | | | | |")
    return lines


def fp16_table(records: list[dict], modes: list[str]) -> list[str]:
    """Each mode's median CPU ms, ours / upstream."""
    head = " | ".join(f"{m} ours / upstream" for m in modes)
    lines = [f"| network | {head} |", "|---|" + "---:|" * len(modes)]
    for rec in records:
        cells = []
        for mode in modes:
            res = rec["modes"].get(mode, {})
            cells.append(" / ".join(_fmt(res.get(k, {}).get("cpu_ms"), ".2f") for k in CONVERTERS))
        lines.append(f"| {rec['model']} | {' | '.join(cells)} |")
    return lines


def report(records: list[dict], args, load_before: float, load_after: float) -> list[str]:
    cpus = os.cpu_count()
    lines = [f"ncnn CPU run time, ours beside upstream pnnx on the same traced `.pt` (the same options), one "
             f"thread; median of {args.rounds} alternating child processes, each the median of {args.runs} runs "
             f"after {args.warmup} warm-up; load average {load_before:.1f} before, {load_after:.1f} after, "
             f"{cpus} CPUs", ""]
    if max(load_before, load_after) > (cpus or 1):
        lines += [f"**The machine was loaded** (load average above its {cpus} CPUs): the wall times are inflated "
                  f"and noisy. The figure compared is the CPU time of the one-thread child, which the load "
                  f"inflates far less; the noise column is the spread of the children's medians.", ""]
    lines += [f"Modes: {', '.join(f'`{m}`' for m in args.modes)} ({MODE_NOTES}).", ""]
    main_mode = args.modes[0]
    lines += [f"### mode `{main_mode}`", "", *table(records, main_mode)]
    if len(args.modes) > 1:
        lines += ["", "### fp16 paths: median CPU ms per mode, ours / upstream", "", *fp16_table(records, args.modes)]
        for mode in args.modes[1:]:
            lines += ["", f"### mode `{mode}`", "", *table(records, mode)]
    return lines


def main(argv=None) -> int:
    from pnnx_model_zoo.run import select_for_cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="?", help="comma-separated zoo names or patterns (default: every one)")
    parser.add_argument("--modes", default="default", help=f"comma-separated, some of {', '.join(MODES)}")
    parser.add_argument("--rounds", type=int, default=3, help="child processes per converter and mode")
    parser.add_argument("--runs", type=int, default=10, help="timed inferences per child")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", type=Path, help="write the tables here (markdown) and the records as .json beside")
    parser.add_argument("--work", type=Path, help="convert into WORK/<network> and keep the files; a later run with "
                        "the same WORK reuses them (delete it after changing a converter)")
    args = parser.parse_args(argv)
    args.modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in args.modes if m not in MODES]
    if unknown or not args.modes or min(args.rounds, args.runs) < 1:
        print(f"error: --modes takes some of {', '.join(MODES)} (got {unknown or 'none'}); --rounds and --runs "
              f"at least 1", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore")
    cases = select_for_cli(args.models)
    if cases is None:
        return 2
    load_before, records = os.getloadavg()[0], []
    for i, case in enumerate(cases, 1):
        start = time.monotonic()
        records.append(bench_case(case, args.modes, args.rounds, args.warmup, args.runs, args.work))
        print(f"[{i}/{len(cases)}] {case.id} {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        lines = report(records, args, load_before, os.getloadavg()[0])
        if args.out is not None:  # after each network: an interrupted run keeps what it measured
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text("\n".join(lines) + "\n")
            args.out.with_suffix(".json").write_text(json.dumps({"head": lines[0], "models": records}, indent=1) + "\n")
    print("\n".join(lines))
    return 0


# bench_zoo.py times both converters' files in its own process with these two
class Runner:
    def __init__(self, base: Path, threads: int) -> None:
        import ncnn

        self.net = ncnn.Net()
        self.net.opt.num_threads = threads
        if self.net.load_param(f"{base}.ncnn.param") or self.net.load_model(f"{base}.ncnn.bin"):
            raise RuntimeError(f"ncnn cannot load {base}")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        import ncnn

        ex = self.net.create_extractor()
        ex.input("in0", ncnn.Mat(x, batch_index=0).clone())
        _, out = ex.extract("out0")
        return np.array(out.numpy(batch_index=0))


def timed(run, x) -> float:
    start = time.perf_counter()
    run(x)
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
