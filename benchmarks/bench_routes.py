"""Benchmark: whole-process conversion time per route: the Python route, the `.pt` route, the
`.pt2` route (torch.export) and upstream pnnx, on resnet18 and vit_b_16 by default.

Each conversion is a fresh process, timed whole (interpreter start, imports, the conversion,
every artefact written): `pnnxref torchvision.models:M inputshape=...` (Python route),
`pnnxref M.pt` (TorchScript), `pnnxref M.pt2` (torch.export, no inputshape: the file holds
it) and `pnnx M.pt inputshape=...` (upstream). The file routes also need their file written
first, by a fresh process that builds the model and traces (`torch.jit.trace` + save) or exports
it (`torch.export.export` + `torch.export.save`): that time is shown on its own and in the
total. Runs alternate between routes so machine load hits all alike; medians are reported,
with the load average before and after (the machine may be shared: rerun on an idle one).

    python benchmarks/bench_routes.py [--runs 5] [--models resnet18,vit_b_16]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SHAPE = "[1,3,224,224]"
MAKE = """
import sys, warnings, torch, torchvision
warnings.simplefilter("ignore")
torch.manual_seed(0)
model = getattr(torchvision.models, sys.argv[1])(weights=None).eval()
x = torch.rand(1, 3, 224, 224)
if sys.argv[3] == "pt":
    torch.jit.trace(model, x, check_trace=False).save(sys.argv[2])  # vit_b_16 fails the re-trace check
else:
    torch.export.save(torch.export.export(model, (x,)), sys.argv[2])
"""


def _timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed:\n{result.stderr[-2000:]}")
    return elapsed


def _ours(*args: str) -> list[str]:
    return [sys.executable, "-m", "pnnx_reference.cli", *args]


def python_route(model: str, work: Path) -> tuple[float, float]:
    return 0.0, _timed(_ours(f"torchvision.models:{model}", f"inputshape={SHAPE}"), work)


def pt_route(model: str, work: Path) -> tuple[float, float]:
    make = _timed([sys.executable, "-c", MAKE, model, f"{model}.pt", "pt"], work)
    return make, _timed(_ours(f"{model}.pt", f"inputshape={SHAPE}"), work)


def pt2_route(model: str, work: Path) -> tuple[float, float]:
    make = _timed([sys.executable, "-c", MAKE, model, f"{model}.pt2", "pt2"], work)
    return make, _timed(_ours(f"{model}.pt2"), work)


def upstream_route(model: str, work: Path) -> tuple[float, float]:
    make = _timed([sys.executable, "-c", MAKE, model, f"{model}.pt", "pt"], work)
    return make, _timed([str(BIN / "pnnx"), f"{model}.pt", f"inputshape={SHAPE}"], work)


ROUTES = {"pnnxref Python route (factory)": python_route, "pnnxref .pt (trace + save, convert)": pt_route,
          "pnnxref .pt2 (export + save, convert)": pt2_route, "upstream pnnx .pt (trace + save, convert)": upstream_route}


def bench(model: str, runs: int) -> dict[str, tuple[float, float]]:
    times = {name: ([], []) for name in ROUTES}
    for _ in range(runs):
        for name, route in ROUTES.items():
            work = Path(tempfile.mkdtemp(prefix="pnnx-bench-"))
            try:
                make, convert = route(model, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            times[name][0].append(make)
            times[name][1].append(convert)
    return {name: (statistics.median(m), statistics.median(c)) for name, (m, c) in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", default="resnet18,vit_b_16")
    args = parser.parse_args(argv)
    if shutil.which("pnnx", path=str(BIN)) is None:
        print("error: the upstream `pnnx` command is not installed beside this Python", file=sys.stderr)
        return 2
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {args.runs} runs")
    print(f"{'model':10} {'route':44} {'file (s)':>9} {'convert (s)':>12} {'total (s)':>10}")
    for model in args.models.split(","):
        for name, (make, convert) in bench(model, args.runs).items():
            file_time = f"{make:9.1f}" if make else f"{'-':>9}"
            print(f"{model:10} {name:44} {file_time} {convert:12.1f} {make + convert:10.1f}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
