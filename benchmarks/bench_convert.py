"""Benchmark: whole-process conversion time of resnet18, ours beside upstream pnnx.

Ours: `pnnxref torchvision.models:resnet18 inputshape=[1,3,224,224]` as a fresh process
(import, capture, passes, all seven artefacts). Upstream: a fresh process that traces
resnet18 to TorchScript and saves the .pt, then the `pnnx` command on it (all artefacts).
Runs alternate (ours, upstream, ours, ...) so machine load hits both alike; medians reported.

    python benchmarks/bench_convert.py [--runs 5] [--model resnet18]

`--pt-door [MODELS]`: the `.pt` door on the zoo networks (every one by default, or the names or
patterns given): each traced once to `model.pt`, then `pnnxref model.pt inputshape=...` beside
`pnnx model.pt inputshape=...` (the same file, the same options), whole processes alternating,
median wall time and median peak resident memory of each; `--out` writes the table (markdown)
and the runs (JSON beside it).

    python benchmarks/bench_convert.py --pt-door --runs 3 --out reports/speed/pt_door.md

`--pt2-door [MODELS]`: the same through the `.pt2` door (each network exported and saved once with
torch.export), beside torch.onnx's dynamo exporter reading the same file (upstream pnnx reads no
.pt2). `--onnx-door [MODELS]`: through the ONNX door (each network exported once with
torch.onnx.export), beside upstream `pnnx model.onnx` on the same file.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent

TRACE = """
import sys, torch, torchvision
torch.manual_seed(0)
model = getattr(torchvision.models, sys.argv[1])(weights=None).eval()
torch.jit.trace(model, torch.rand(1, 3, 224, 224)).save(sys.argv[2])
"""


def _run(cmd: list[str], cwd: Path) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed:\n{result.stderr[-2000:]}")


def first_error_line(e: BaseException) -> str:
    """bench_convert._run exits with the command and its stderr: the last line says why."""
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    text = lines[-1] if isinstance(e, SystemExit) and lines else (lines[0] if lines else "")
    return f"{type(e).__name__}: {text}"[:300]


def ours(model: str, workdir: Path) -> float:
    start = time.perf_counter()
    _run([str(BIN / "pnnxref"), f"torchvision.models:{model}", "inputshape=[1,3,224,224]"], workdir)
    return time.perf_counter() - start


def upstream(model: str, workdir: Path) -> float:
    pt = workdir / f"{model}.pt"
    start = time.perf_counter()
    _run([sys.executable, "-c", TRACE, model, str(pt)], workdir)
    _run([str(BIN / "pnnx"), str(pt), "inputshape=[1,3,224,224]"], workdir)
    return time.perf_counter() - start


# a zoo network traced into argv[2] (bench_zoo.py and the .pt-door figures)
ZOO_TRACE = """
import sys, warnings, torch
warnings.filterwarnings("ignore")
from pnnx_model_zoo.zoo import all_cases as zoo_cases
case = {c.id: c for c in zoo_cases()}[sys.argv[1]]
torch.jit.trace(case.make_model(), tuple(case.make_inputs()), check_trace=False).save(sys.argv[2])
"""


# Started by a small launcher: a process forked from this one (torch imported, ~700 MB) starts
# with this process's peak as its own, so ru_maxrss of a child of ours would never read less.
# A command's memory is that of all its processes at once: upstream's `pnnx` is a Python script
# that imports torch and then waits for the converter binary, so both are resident together. The
# launcher samples the resident size of the command's process tree every 10 ms (the tree re-read
# from /proc every 100 ms) and reports the largest sum beside the largest single process's peak.
LAUNCH = """
import os, subprocess, sys, time
PAGE = os.sysconf("SC_PAGE_SIZE")

def tree(root):
    parents = {}
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat") as f:
                parents[int(name)] = int(f.read().rpartition(")")[2].split()[1])
        except (ValueError, OSError):
            continue
    found, todo = {root}, [root]
    while todo:
        parent = todo.pop()
        todo += [pid for pid, pp in parents.items() if pp == parent and pid not in found]
        found.update(todo)
    return found

def resident(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError):
        return 0

start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
pids, scanned, together = {proc.pid}, 0.0, 0
while True:
    done, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if done:
        break
    if time.perf_counter() - scanned > 0.1:
        pids, scanned = tree(proc.pid), time.perf_counter()
    together = max(together, sum(resident(pid) for pid in pids))
    time.sleep(0.01)
print(time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss, together // 1024,
      usage.ru_utime + usage.ru_stime)
"""


def measured(cmd: list[str], cwd: Path) -> tuple[float, float, float, float]:
    """(wall seconds, peak MB of the command's processes together, peak MB of its largest process,
    CPU seconds: user + system of the command and what it waited for) of one whole command: the
    together figure is never below the largest process's own peak; CPU seconds move less than
    wall time with the shared machine's load."""
    with tempfile.TemporaryFile() as err:  # not a pipe: nobody reads it while the process runs
        launcher = subprocess.run([sys.executable, "-S", "-c", LAUNCH, *cmd], cwd=cwd, stdout=subprocess.PIPE,
                                  stderr=err, text=True)
        wall, code, maxrss, together, cpu = (launcher.stdout.split() if launcher.returncode == 0
                                             else ("0", "1", "0", "0", "0"))
        if int(code) != 0:
            err.seek(0)
            raise SystemExit(f"error: {' '.join(cmd)} failed:\n{err.read().decode(errors='replace')[-2000:]}")
    largest = int(maxrss) / 1024
    return float(wall), max(int(together) / 1024, largest), largest, float(cpu)


# Each door: the file made once per network (a script run as `python -c SCRIPT CASE_ID PATH`), and the
# command beside ours (label, argv after the file).
PT2 = """
import sys, warnings, torch
warnings.filterwarnings("ignore")
from pnnx_model_zoo.zoo import all_cases as zoo_cases
from pnnx_conformance.converters.reference_export import export_to_pt2
from pathlib import Path
case = {c.id: c for c in zoo_cases()}[sys.argv[1]]
export_to_pt2(case, Path(sys.argv[2]).parent).rename(sys.argv[2])
"""

ONNX = """
import sys, warnings, torch
warnings.filterwarnings("ignore")
from pnnx_model_zoo.zoo import all_cases as zoo_cases
from pnnx_conformance.converters.reference_onnx import export_torch
from pathlib import Path
case = {c.id: c for c in zoo_cases()}[sys.argv[1]]
export_torch(case.make_model().eval(), case.make_inputs(), Path(sys.argv[2]), dynamo=False)
"""

# torch.onnx's dynamo exporter on the same .pt2: the program read back, exported as it is (no second trace)
DYNAMO = """
import sys, torch
program = torch.export.load(sys.argv[1])
args, kwargs = program.example_inputs
torch.onnx.export(program, args, "dynamo.onnx", kwargs=kwargs, dynamo=True)
"""


def door_commands(door: str, case) -> tuple[str, dict[str, list[str]]]:
    """(the file's name, {"ours": argv, "upstream": argv}) of one network through `door`."""
    from pnnx_conformance.converters.case_files import inputshape_arg
    from pnnx_model_zoo.converters import upstream_args

    shape = inputshape_arg(case)
    if door == "pt2":  # the program holds its example inputs
        return "model.pt2", {"ours": [str(BIN / "pnnxref"), "model.pt2"],
                             "upstream": [sys.executable, "-c", DYNAMO, "model.pt2"]}
    if door == "onnx":
        return "model.onnx", {"ours": [str(BIN / "pnnxref"), "model.onnx", shape],
                              "upstream": [str(BIN / "pnnx"), "model.onnx", shape]}
    options = [shape, *(upstream_args(case, case.make_model()) if case.options else [])]
    return "model.pt", {"ours": [str(BIN / "pnnxref"), "model.pt", *options],
                        "upstream": [str(BIN / "pnnx"), "model.pt", *options]}


def door_file(door: str, case, path: Path) -> None:
    script = {"pt": ZOO_TRACE, "pt2": PT2, "onnx": ONNX}[door]
    _run([sys.executable, "-c", script, case.id, str(path)], path.parent)


def pt_door(case, runs: int, workdir: Path, door: str = "pt") -> dict:
    """One zoo network through a door: ours and the other converter on the same file."""
    name, commands = door_commands(door, case)
    got = {k: [] for k in commands}
    errors = {}
    try:
        door_file(door, case, workdir / name)
    except SystemExit as err:  # the file cannot be made (an exporter refused the network)
        errors = {k: "no file: " + str(err).strip().splitlines()[-1][:200] for k in commands}
    for i in range(runs):
        for key in (commands if i % 2 == 0 else reversed(commands)):
            if key in errors:
                continue
            try:
                got[key].append(measured(commands[key], workdir))
            except SystemExit as err:
                errors[key] = str(err).strip().splitlines()[-1][:200]
            for out in workdir.iterdir():
                if out.name != name:
                    shutil.rmtree(out) if out.is_dir() else out.unlink()
    record = {"model": case.id, "runs": got, "errors": errors}
    for key, values in got.items():
        record[key] = {"wall_s": statistics.median(v[0] for v in values) if values else None,
                       "peak_mb": statistics.median(v[1] for v in values) if values else None,
                       "largest_process_mb": statistics.median(v[2] for v in values) if values else None,
                       "cpu_s": statistics.median(v[3] for v in values) if values else None}
    return record


def _ratio(record: dict, what: str):
    ours, theirs = record["ours"].get(what), record["upstream"].get(what)
    return ours / theirs if ours and theirs else None


BESIDE = {"pt": "upstream", "pt2": "torch.onnx", "onnx": "upstream"}


def pt_door_table(records: list[dict], runs: int, door: str = "pt") -> list[str]:
    def fmt(value, spec):
        return "-" if value is None else format(value, spec)

    other = BESIDE[door]
    columns = (("wall_s", "s", ".2f"), ("cpu_s", "CPU-s", ".2f"), ("peak_mb", "MB", ".0f"))
    lines = ["| network | " + " | ".join(f"ours {unit} | {other} {unit} | ratio" for _, unit, _ in columns) + " |",
             "|---|" + "---:|" * 3 * len(columns)]
    for r in records:
        cells = [f"{fmt(r['ours'].get(k), spec)} | {fmt(r['upstream'].get(k), spec)} | {fmt(_ratio(r, k), '.2f')}"
                 for k, _, spec in columns]
        lines.append(f"| {r['model']} | " + " | ".join(cells) + " |")
        for key, error in r["errors"].items():
            label = "ours" if key == "ours" else other
            lines.append(f"| {r['model']}: {label} failed | {error} |" + " |" * (3 * len(columns) - 1))
    medians = []
    for key, _, _ in columns:
        ratios = [x for x in (_ratio(r, key) for r in records) if x]
        medians.append(f" | | **{statistics.median(ratios):.2f}**" if ratios else " | | -")
    if any(_ratio(r, "wall_s") for r in records):
        lines.append("| **median ratio** |" + " |".join(medians) + " |")
    return lines


def main_pt_door(patterns: str | None, runs: int, out: Path | None, door: str = "pt") -> int:
    from pnnx_model_zoo.run import select_for_cli

    cases = select_for_cli(patterns or None)
    if cases is None:
        return 2
    load_before = os.getloadavg()[0]
    records = []
    for i, case in enumerate(cases, 1):
        print(f"[{i}/{len(cases)}] {case.id}", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            records.append(pt_door(case, runs, Path(tmp), door))
        lines = pt_door_report(records, runs, load_before, door)
        if out is not None:  # after each network: a long run interrupted keeps what it measured
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(lines) + "\n")
            out.with_suffix(".json").write_text(json.dumps({"runs": runs, "head": lines[0], "models": records},
                                                           indent=1) + "\n")
    print("\n".join(lines))
    return 0


HEADS = {
    "pt": "`.pt` door: `pnnxref model.pt` beside upstream `pnnx model.pt` on the same traced file",
    "pt2": ("`.pt2` door: `pnnxref model.pt2` (seven files and the self-check) beside torch.onnx's dynamo "
            "exporter on the same file (`torch.export.load`, then `torch.onnx.export(program, dynamo=True)`: "
            "one .onnx; upstream pnnx reads no .pt2)"),
    "onnx": ("ONNX door: `pnnxref model.onnx` beside upstream `pnnx model.onnx` on the same file "
             "(torch.onnx.export, TorchScript-based)"),
}


def pt_door_report(records: list[dict], runs: int, load_before: float, door: str = "pt") -> list[str]:
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs"
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    head = (f"{HEADS[door]}, whole processes alternating, medians of {runs} runs each; {load}; "
            f"OMP_NUM_THREADS={threads}")
    memory = ("MB: the command's peak resident memory, all its processes together (upstream's `pnnx` is a "
              "Python script that imports torch and waits for the converter binary); the largest single "
              "process's own peak is `largest_process_mb` in the JSON")
    return [head, "", memory, "", *pt_door_table(records, runs, door)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--pt-door", nargs="?", const="", metavar="MODELS",
                        help="the .pt door on the zoo networks (all, or these comma-separated names/patterns)")
    parser.add_argument("--pt2-door", nargs="?", const="", metavar="MODELS",
                        help="the .pt2 door, beside torch.onnx's dynamo exporter on the same file")
    parser.add_argument("--onnx-door", nargs="?", const="", metavar="MODELS",
                        help="the ONNX door, beside upstream pnnx on the same .onnx")
    parser.add_argument("--out", type=Path, help="with a door: write the table here (and the runs as .json)")
    args = parser.parse_args(argv)
    if shutil.which("pnnx", path=str(BIN)) is None:
        print("error: the upstream `pnnx` command is not installed beside this Python", file=sys.stderr)
        return 2
    for door in ("pt", "pt2", "onnx"):
        patterns = getattr(args, f"{door}_door")
        if patterns is not None:
            return main_pt_door(patterns, args.runs, args.out, door)
    times = {"pnnxref (capture + passes + 7 files)": [], "upstream pnnx (trace + convert)": []}
    runners = list(zip(times.values(), (ours, upstream)))
    for i in range(args.runs):
        for bucket, runner in runners if i % 2 == 0 else reversed(runners):
            with tempfile.TemporaryDirectory() as tmp:
                bucket.append(runner(args.model, Path(tmp)))
    print(f"{args.model}, whole-process conversion, {args.runs} alternating runs each (seconds)")
    print(f"{'converter':40} {'median':>8} {'min':>8} {'max':>8}")
    for name, values in times.items():
        print(f"{name:40} {statistics.median(values):8.2f} {min(values):8.2f} {max(values):8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
