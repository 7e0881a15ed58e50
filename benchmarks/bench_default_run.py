"""Benchmark: the default conformance run (`./run.sh conformance`, tox.ini's `conformance`
environment) command by command, and its time per converter route and per backend.

The commands are read from tox.ini, so this times exactly what the default run does, with its
folders moved under OUT (the report writes OUT/reports and a copy of README.md, never the
checkout's). Per command: wall time and CPU time (user + system of the whole process tree:
harness workers, fork servers and their children, upstream `pnnx` processes). Per route
(converter, upstream's beside ours) and per check/backend: the worker time of its records (the
sum of their `time_s`, wall time inside the workers) and that share of the run's CPU time. The
machine may be shared: the load average is printed before and after, and the CPU figures are
what to compare across loaded runs.

    python benchmarks/bench_default_run.py [--out DIR] [-- EXTRA RUN ARGS, e.g. --max-cases 60]
"""
from __future__ import annotations

import argparse
import configparser
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def default_commands(tox_ini: Path = ROOT / "tox.ini") -> list[str]:
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(tox_ini)
    lines = ini["testenv:conformance"]["commands"].splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def localized(command: str, out: Path, extra: list[str]) -> list[str]:
    """The command with its folders under `out` and {posargs} replaced by `extra`."""
    argv = []
    for word in shlex.split(command):
        if word == "{posargs}":
            argv += extra
            continue
        word = word.replace("build/conformance", str(out / "build"))
        argv.append(str(out / "README.md") if word == "README.md" else str(out / "reports") if word == "reports"
                    else word)
    if argv[0] in ("python", "pnnx-conformance"):
        argv[0] = sys.executable if argv[0] == "python" else str(BIN / argv[0])
    return argv


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_commands(commands: list[str], out: Path, extra: list[str]) -> list[dict]:
    rows = []
    for command in commands:
        argv = localized(command, out, extra)
        cpu, start = _cpu_children(), time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        rows.append({"command": command, "wall_s": time.perf_counter() - start, "cpu_s": _cpu_children() - cpu,
                     "rc": done.returncode})
        if done.returncode != 0:
            print(f"warning: exit code {done.returncode}: {' '.join(argv)}\n{done.stderr[-1500:]}", file=sys.stderr)
    return rows


def worker_seconds(build: Path) -> tuple[dict, dict]:
    """(route -> worker s, (route, check/backend) -> worker s) over every results.jsonl under build."""
    routes, parts = defaultdict(float), defaultdict(float)
    for path in sorted(build.rglob("results.jsonl")):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            route = r["converter"] + (" (zoo)" if r["table"] == "models" else "")
            what = r["check"] + (f" {r['backend']} {r['precision']}" if r.get("backend") else "")
            routes[route] += r["time_s"]
            parts[(route, what)] += r["time_s"]
    return routes, parts


def report(rows: list[dict], routes: dict, parts: dict, load: tuple[float, float]) -> str:
    wall, cpu = sum(r["wall_s"] for r in rows), sum(r["cpu_s"] for r in rows)
    lines = [f"load average before {load[0]:.1f}, after {load[1]:.1f} on {os.cpu_count()} cores", "",
             f"{'wall s':>8} {'CPU s':>8}  command"]
    lines += [f"{r['wall_s']:8.1f} {r['cpu_s']:8.1f}  {r['command']}" for r in rows]
    lines += [f"{wall:8.1f} {cpu:8.1f}  total ({cpu / (os.cpu_count() or 1):.0f} s of CPU per core)", ""]
    busy = sum(routes.values()) or 1.0
    lines.append(f"{'worker s':>9} {'~CPU s':>8}  route (worker time of its records; CPU apportioned by it)")
    for route, seconds in sorted(routes.items(), key=lambda kv: -kv[1]):
        lines.append(f"{seconds:9.1f} {cpu * seconds / busy:8.1f}  {route}")
        for (r, what), s in sorted(parts.items(), key=lambda kv: -kv[1]):
            if r == route and s >= 0.02 * seconds:
                lines.append(f"{'':9} {'':8}    {100 * s / seconds:4.0f}%  {what}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for the run (default: a temporary one, removed)")
    parser.add_argument("extra", nargs="*", help="arguments for the run commands' {posargs} (after --)")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="pnnx-bench-default-"))
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / "README.md", out / "README.md")
    shutil.copytree(ROOT / "reports", out / "reports", dirs_exist_ok=True)
    before = os.getloadavg()[0]
    try:
        rows = run_commands(default_commands(), out, args.extra)
        routes, parts = worker_seconds(out / "build")
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    print(report(rows, routes, parts, (before, os.getloadavg()[0])))
    return 1 if any(r["rc"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
