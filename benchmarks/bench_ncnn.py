"""Our ncnn export against upstream pnnx's on torchvision networks (weights=None, seed 0):
layer count, ncnn.bin size, CPU inference time (same ncnn package, same process, runs
alternating, median) and how far each output is from torch.

    .tox/env/bin/python benchmarks/bench_ncnn.py [--runs 20] [--threads 1] [--json out.json] [net ...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import ncnn
import numpy as np
import torch
import torchvision

from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn

NETS = ("resnet18", "mobilenet_v2", "shufflenet_v2_x1_0")
SHAPE = (1, 3, 224, 224)


def build(name: str):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    return model, torch.rand(SHAPE)


def export_ours(model, x, folder: Path) -> Path:
    base = folder / "ours"
    write_ncnn(capture(model, (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py")
    return base


def export_upstream(model, x, folder: Path) -> Path:
    with torch.no_grad():
        torch.jit.trace(model, (x,)).save(str(folder / "model.pt"))
    pnnx = Path(sys.executable).with_name("pnnx")
    shape = ",".join(map(str, SHAPE))
    subprocess.run([str(pnnx), "model.pt", f"inputshape=[{shape}]"], cwd=folder, check=True,
                   capture_output=True)
    return folder / "model"


class Runner:
    def __init__(self, base: Path, threads: int) -> None:
        self.net = ncnn.Net()
        self.net.opt.num_threads = threads
        if self.net.load_param(f"{base}.ncnn.param") or self.net.load_model(f"{base}.ncnn.bin"):
            raise RuntimeError(f"ncnn cannot load {base}")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        ex = self.net.create_extractor()
        ex.input("in0", ncnn.Mat(x, batch_index=0).clone())
        _, out = ex.extract("out0")
        return np.array(out.numpy(batch_index=0))


def layer_count(base: Path) -> int:
    return int(Path(f"{base}.ncnn.param").read_text().splitlines()[1].split()[0])


def layer_signature(base: Path) -> list[tuple]:
    """(type, params) per layer, blob and layer names left out."""
    rows = []
    for line in Path(f"{base}.ncnn.param").read_text().splitlines()[2:]:
        parts = line.split()
        nin, nout = int(parts[2]), int(parts[3])
        rows.append((parts[0], tuple(sorted(parts[4 + nin + nout:]))))
    return rows


def timed(run, x) -> float:
    start = time.perf_counter()
    run(x)
    return time.perf_counter() - start


def measure(name: str, runs: int, threads: int) -> dict:
    model, x = build(name)
    with torch.no_grad():
        expected = model(x).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        bases = {"ours": export_ours(model, x, Path(tmp)), "upstream": export_upstream(model, x, Path(tmp))}
        runners = {k: Runner(b, threads) for k, b in bases.items()}
        xs = x.numpy()
        result = {"net": name}
        for k, base in bases.items():
            result[k] = {"layers": layer_count(base), "bin_bytes": Path(f"{base}.ncnn.bin").stat().st_size,
                         "max_abs_diff_vs_torch": float(np.abs(runners[k](xs) - expected).max())}
        result["same_layers_and_params"] = layer_signature(bases["ours"]) == layer_signature(bases["upstream"])
        result["same_bin"] = Path(f"{bases['ours']}.ncnn.bin").read_bytes() == \
            Path(f"{bases['upstream']}.ncnn.bin").read_bytes()
        times = {k: [] for k in runners}
        for _ in range(runs):  # alternate so that machine load hits both alike
            for k, run in runners.items():
                times[k].append(timed(run, xs))
        for k in runners:
            result[k]["median_ms"] = 1000 * statistics.median(times[k])
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("nets", nargs="*", default=list(NETS))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    rows = [measure(n, args.runs, args.threads) for n in args.nets]
    print(f"{'net':<20} {'':<9} {'layers':>6} {'bin bytes':>10} {'median ms':>10} {'max|d| vs torch':>16}")
    for r in rows:
        for k in ("ours", "upstream"):
            m = r[k]
            print(f"{r['net']:<20} {k:<9} {m['layers']:>6} {m['bin_bytes']:>10} {m['median_ms']:>10.2f} "
                  f"{m['max_abs_diff_vs_torch']:>16.2e}")
        print(f"{r['net']:<20} same layer types and params as upstream: {r['same_layers_and_params']}, "
              f"same ncnn.bin bytes: {r['same_bin']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
