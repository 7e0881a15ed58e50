"""Benchmark: whole-process conversion time of resnet18, ours beside upstream pnnx.

Ours: `pnnxref torchvision.models:resnet18 inputshape=[1,3,224,224]` as a fresh process
(import, capture, passes, all seven artefacts). Upstream: a fresh process that traces
resnet18 to TorchScript and saves the .pt, then the `pnnx` command on it (all artefacts).
Runs alternate (ours, upstream, ours, ...) so machine load hits both alike; medians reported.

    python benchmarks/bench_convert.py [--runs 5] [--model resnet18]
"""
from __future__ import annotations

import argparse
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="resnet18")
    args = parser.parse_args(argv)
    if shutil.which("pnnx", path=str(BIN)) is None:
        print("error: the upstream `pnnx` command is not installed beside this Python", file=sys.stderr)
        return 2
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
