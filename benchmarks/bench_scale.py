"""Benchmark: conversion time and peak memory against model size, ours beside upstream pnnx.

Models are random-init decoder-only transformers built here (pre-norm blocks: LayerNorm,
causal self-attention written with Linear/matmul/softmax, GELU MLP; input `[1,16,width]`),
from 50 MB to 3.2 GB of float32 weights. Each size runs, one process at a time:

- ours, Python API: a fresh process builds the model and calls `pnnx_reference.export` (all
  seven artefacts and the self-check); per artefact its time, the weight file's write rate and
  the peak memory above what the process held before (VmHWM, reset per phase).
- ours, `.pt`: `pnnxref MODEL.pt inputshape=...` (the TorchScript route), whole process.
- upstream: `pnnx MODEL.pt inputshape=...`, whole process.

The `.pt` is traced and saved by another process first (not timed). Peak memory of a whole
process is its maximum resident set (wait4), which includes torch itself and the weights
once; "extra" is the peak above the resident set after the model was built. A run over
`--limit-gb` of resident memory is killed and reported as such. The disk's own speed for a
new file is measured in the same run (`disk_mb_s`), since every weight file is written to it.

    python benchmarks/bench_scale.py [--upto-gb 0.7] [--routes api,pt,upstream] [--out reports/scale]

Writes OUT/scale.json, OUT/scale.md (table) and OUT/scale.svg (time and memory against size).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SEQ = 16
# (width, layers): 48 * width^2 * layers bytes of float32 weights (plus norms and biases)
SIZES = [(512, 4), (768, 8), (1024, 12), (1536, 16), (2048, 16)]
PHASES = ("capture", "pnnx", "python", "onnx", "ncnn", "selfcheck")
WEIGHT_FILE = {"pnnx": ".pnnx.bin", "onnx": ".pnnx.onnx", "ncnn": ".ncnn.bin"}


# --- the model ---------------------------------------------------------------------------
def build(width: int, layers: int):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = width // 64
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.register_buffer("mask", torch.full((SEQ, SEQ), -1e4).triu(1))

        def forward(self, x):
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q, k, v = (t.reshape(1, SEQ, self.heads, 64).permute(0, 2, 1, 3) for t in (q, k, v))
            a = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * 0.125 + self.mask, dim=-1)
            x = x + self.proj(torch.matmul(a, v).permute(0, 2, 1, 3).reshape(1, SEQ, width))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.norm = nn.LayerNorm(width)

        def forward(self, x):
            return self.norm(self.blocks(x))

    torch.manual_seed(0)
    with torch.no_grad():
        return Decoder().eval()


def weight_bytes(width: int, layers: int) -> int:
    per_block = 12 * width * width + 13 * width + SEQ * SEQ  # 4 Linear weights, their biases, norms, mask
    return 4 * (per_block * layers + 2 * width)


# --- child processes -----------------------------------------------------------------------
def _rss_mb() -> tuple[float, float]:
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def child_api(width: int, layers: int, out: Path, fp16: bool = True) -> dict:
    """Build the model and export it through the Python API; per-phase time and peak. The
    input and torch's output are left beside the files for the onnxruntime check."""
    import numpy as np
    import torch

    from pnnx_reference import api
    from pnnx_reference.formats import pnnx_param

    model = build(width, layers)
    x = torch.rand(1, SEQ, width)
    phases: dict[str, dict] = {}
    names = {"_capture": "capture", "save": "pnnx", "write_python": "python", "write_onnx": "onnx",
             "write_ncnn": "ncnn", "_self_check": "selfcheck"}

    def wrap(owner, attr):
        fn = getattr(owner, attr)

        def run(*args, **kwargs):
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            before, _ = _rss_mb()
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                _, peak = _rss_mb()
                phases[names[attr]] = {"s": time.perf_counter() - start, "peak_over_before_mb": peak - before,
                                       "peak_mb": peak}
        setattr(owner, attr, run)

    for attr in ("_capture", "write_python", "write_onnx", "write_ncnn", "_self_check"):
        wrap(api, attr)
    wrap(pnnx_param, "save")
    base, _ = _rss_mb()
    start = time.perf_counter()
    result = api.export(model, (x,), out, "m", fp16=fp16)
    total = time.perf_counter() - start
    with torch.no_grad():
        np.save(out / "x.npy", x.numpy())
        np.save(out / "y.npy", model(x).numpy())
    for phase, suffix in WEIGHT_FILE.items():
        path = out / f"m{suffix}"
        if phase in phases and path.exists():
            size = path.stat().st_size + (out / f"m{suffix}.data").stat().st_size \
                if (out / f"m{suffix}.data").exists() else path.stat().st_size
            phases[phase]["file_bytes"] = size
            phases[phase]["mb_per_s"] = size / 1e6 / phases[phase]["s"]
    peak = max(p["peak_mb"] for p in phases.values())
    return {"s": total, "rss_with_model_mb": base, "peak_mb": peak, "extra_mb": peak - base, "phases": phases,
            "self_check": result.self_check, "onnx_external": "pnnxonnxdata" in result.paths,
            "files": {p.name: p.stat().st_size for p in sorted(out.iterdir())}}


def child_ort(out: Path) -> dict:
    """Run NAME.pnnx.onnx in onnxruntime on the saved input; the largest difference from torch."""
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(out / "m.pnnx.onnx"), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: np.load(out / "x.npy")})
    want = np.load(out / "y.npy")
    return {"max_abs_diff": float(np.abs(got - want).max()), "max_abs": float(np.abs(want).max()),
            "external_data": (out / "m.pnnx.onnx.data").exists()}


def child_trace(width: int, layers: int, pt: Path) -> dict:
    import torch

    model = build(width, layers)
    torch.jit.trace(model, torch.rand(1, SEQ, width)).save(str(pt))
    return {"pt_bytes": pt.stat().st_size}


# --- measuring a process -------------------------------------------------------------------
def _tree_rss_mb(pid: int) -> float:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = dict(line.split(":", 1) for line in open(f"/proc/{p}/status"))
            total += int(status.get("VmRSS", "0 kB").split()[0])
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{task}/children").read().split()]
        except (OSError, ValueError):
            continue
    return total / 1024


def measured(cmd: list[str], cwd: Path, limit_mb: float, timeout_s: float) -> dict:
    """Run `cmd`; wall time, peak resident memory (wait4: the process and its waited-for
    children), stdout's last line; killed past `limit_mb` (sampled) or `timeout_s`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    killed: list[str] = []

    def watch():
        while proc.poll() is None:
            if _tree_rss_mb(proc.pid) > limit_mb:
                killed.append(f"over {limit_mb / 1024:.0f} GB resident")
            elif time.perf_counter() - start > timeout_s:
                killed.append(f"over {timeout_s:.0f} s")
            if killed:
                os.killpg(proc.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    watcher.join()
    elapsed = time.perf_counter() - start
    lines = output.strip().splitlines()
    run = {"s": elapsed, "peak_mb": usage.ru_maxrss / 1024, "rc": proc.returncode, "last": lines[-1] if lines else ""}
    if killed or proc.returncode != 0:
        run["error"] = killed[0] if killed else (lines[-1] if lines else f"exit {proc.returncode}")[-300:]
    return run


def disk_mb_s(folder: Path, size_mb: int = 512) -> float:
    """Write speed of a new file here (16 MiB writes, then fsync), as every weight file is written."""
    block = os.urandom(1 << 20) * 16
    path = folder / "disk-probe"
    start = time.perf_counter()
    with open(path, "wb") as f:
        for _ in range(size_mb // 16):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    elapsed = time.perf_counter() - start
    path.unlink()
    return size_mb * 2**20 / 1e6 / elapsed


# --- one size --------------------------------------------------------------------------------
def one_size(width: int, layers: int, routes: list[str], limit_mb: float, timeout_s: float) -> dict:
    row = {"width": width, "layers": layers, "weights_bytes": weight_bytes(width, layers)}
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=os.environ.get("BENCH_TMP")) as tmp:
        tmp = Path(tmp)
        me = [sys.executable, os.path.abspath(__file__)]
        for route in ("api", "api_fp32"):
            if route not in routes:
                continue
            (tmp / route).mkdir()
            run = measured(me + ["--child", route, str(width), str(layers), str(tmp / route)], tmp, limit_mb, timeout_s)
            if "error" not in run:
                run.update(json.loads(run.pop("last")))
                ort = measured(me + ["--child", "ort", "0", "0", str(tmp / route)], tmp, limit_mb, timeout_s)
                if "error" not in ort:
                    ort.update(json.loads(ort.pop("last")))
                run["onnxruntime"] = ort
            row["ours_" + route] = run
            shutil.rmtree(tmp / route)
        pt = tmp / "m.pt"
        if {"pt", "upstream"} & set(routes):
            traced = measured(me + ["--child", "trace", str(width), str(layers), str(pt)], tmp, limit_mb, timeout_s)
            if "error" in traced:
                row["trace_error"] = traced["error"]
                return row
        shape = f"inputshape=[1,{SEQ},{width}]"
        for route, cmd in (("pt", [str(BIN / "pnnxref"), "m.pt", shape]), ("upstream", [str(BIN / "pnnx"), "m.pt", shape])):
            if route in routes:
                work = tmp / route
                work.mkdir()
                os.link(pt, work / "m.pt")
                run = measured(cmd, work, limit_mb, timeout_s)
                run.pop("last")
                run["files"] = {p.name: p.stat().st_size for p in sorted(work.iterdir()) if p.is_file()}
                row["ours_pt" if route == "pt" else "upstream"] = run
                shutil.rmtree(work)
    return row


# --- report ----------------------------------------------------------------------------------
def _mb(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def table(report: dict) -> str:
    lines = ["# Conversion time and peak memory against model size\n",
             f"Machine: {report['machine']['cpus']} cores, load average before {report['machine']['loadavg_before']}, "
             f"after {report['machine']['loadavg_after']}; new-file write speed of the disk "
             f"{report['disk_mb_s']:.0f} MB/s (fsync'd). `python benchmarks/bench_scale.py`, {report['time_utc']}.\n",
             "Times in seconds, memory in MB (peak resident set of the whole process; ours' "
             "\"extra\" is the peak above the process with the model built). Per artefact (ours, "
             "Python API): seconds / MB/s of the weight file written (lowering, check and conversion "
             "included); for the self-check, seconds / peak memory above the process before it. "
             "Upstream's `pnnx` command is a Python wrapper (it imports torch, about 630 MB) that runs the "
             "binary: its peak is the larger of the two processes, i.e. the binary's once that passes 630 MB.\n",
             "| weights MB | ours API s | ours API peak | ours API extra | extra / weights | .pt ours s | "
             ".pt ours peak | upstream s | upstream peak | pnnx.bin | onnx | ncnn.bin | self-check s |",
             "|" + "---|" * 13]
    for row in report["rows"]:
        api, pt, up = row.get("ours_api", {}), row.get("ours_pt", {}), row.get("upstream", {})
        weights = row["weights_bytes"] / 1e6
        phases = api.get("phases", {})

        def cell(run, key):
            return f"error: {run['error']}" if "error" in run else (f"{run[key]:,.1f}" if key in run else "-")

        def phase(name):
            p = phases.get(name)
            if not p:
                return "-"
            if "mb_per_s" in p:
                return f"{p['s']:.1f} s / {p['mb_per_s']:.0f}"
            return f"{p['s']:.1f} s / +{p['peak_over_before_mb']:.0f} MB"
        ratio = f"{api['extra_mb'] * 2**20 / row['weights_bytes']:.0%}" if "extra_mb" in api else "-"
        lines.append(f"| {weights:,.0f} | {cell(api, 's')} | {cell(api, 'peak_mb')} | {cell(api, 'extra_mb')} | "
                     f"{ratio} | {cell(pt, 's')} | {cell(pt, 'peak_mb')} | {cell(up, 's')} | {cell(up, 'peak_mb')} | "
                     f"{phase('pnnx')} | {phase('onnx')} | {phase('ncnn')} | {phase('selfcheck')} |")
    lines += ["", "ONNX written by ours (Python API) run in onnxruntime on the example input, against torch "
              "(fp16 weights unless fp32; fp32 past 2 GiB keeps its weights in `m.pnnx.onnx.data`):", "",
              "| weights MB | weights in ONNX | seconds | peak MB | extra MB | ONNX files | onnxruntime |", "|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        for key, kind in (("ours_api", "fp16"), ("ours_api_fp32", "fp32")):
            run = row.get(key)
            if not run:
                continue
            if "error" in run:
                lines.append(f"| {row['weights_bytes'] / 1e6:,.0f} | {kind} | error: {run['error']} | | | | |")
                continue
            ort = run.get("onnxruntime", {})
            ran = f"error: {ort['error']}" if "error" in ort else \
                f"runs, max abs diff {ort['max_abs_diff']:.2g} (outputs up to {ort['max_abs']:.2g}), peak {ort['peak_mb']:,.0f} MB"
            files = " + ".join(f"{name} {size / 1e6:,.0f} MB" for name, size in run["files"].items() if ".pnnx.onnx" in name)
            lines.append(f"| {row['weights_bytes'] / 1e6:,.0f} | {kind} | {run['s']:.1f} | {run['peak_mb']:,.0f} | "
                         f"{run['extra_mb']:,.0f} | {files} | {ran} |")
    return "\n".join(lines) + "\n"


def svg(report: dict) -> str:
    """Two panels (time, peak memory) against weights, one line per route; hand-written SVG."""
    routes = [("ours_api", "ours (Python API)", "#1f77b4"), ("ours_pt", "ours (.pt)", "#2ca02c"),
              ("upstream", "upstream pnnx (.pt)", "#d62728")]
    rows = report["rows"]
    xs = [r["weights_bytes"] / 1e6 for r in rows]
    width, height, pad = 420, 300, 50
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width}" height="{height + 40}" '
             f'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>']
    for panel, (key, label) in enumerate((("s", "conversion time (s)"), ("peak_mb", "peak memory (MB)"))):
        ox = panel * width
        values = [r[k][key] for r in rows for k, _, _ in routes if k in r and key in r[k] and "error" not in r[k]]
        top = max(values + [1]) * 1.1
        lo, hi = math.log10(min(xs)), math.log10(max(xs) if max(xs) > min(xs) else min(xs) * 10)

        def px(x):
            return ox + pad + (math.log10(x) - lo) / (hi - lo) * (width - 2 * pad)

        def py(y):
            return height - pad + 20 - y / top * (height - 2 * pad)
        parts.append(f'<line x1="{ox + pad}" y1="{py(0)}" x2="{ox + width - pad}" y2="{py(0)}" stroke="black"/>')
        parts.append(f'<line x1="{ox + pad}" y1="{py(0)}" x2="{ox + pad}" y2="{py(top)}" stroke="black"/>')
        parts.append(f'<text x="{ox + width / 2}" y="16" text-anchor="middle" font-weight="bold">{label}</text>')
        parts.append(f'<text x="{ox + width / 2}" y="{height + 30}" text-anchor="middle">weights (MB, log scale)</text>')
        for x in xs:
            parts.append(f'<text x="{px(x):.1f}" y="{py(0) + 14:.1f}" text-anchor="middle">{x:,.0f}</text>')
        for i in range(5):
            y = top / 1.1 * i / 4
            parts.append(f'<text x="{ox + pad - 4}" y="{py(y) + 4:.1f}" text-anchor="end">{y:,.0f}</text>')
        for k, name, colour in routes:
            points = [(px(x), py(r[k][key])) for x, r in zip(xs, rows) if k in r and key in r[k] and "error" not in r[k]]
            if points:
                path = " ".join(f"{a:.1f},{b:.1f}" for a, b in points)
                parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
                parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>' for a, b in points]
        if key == "peak_mb":  # the weights themselves, for scale
            line = " ".join(f"{px(x):.1f},{py(x):.1f}" for x in xs if x <= top)
            parts.append(f'<polyline points="{line}" fill="none" stroke="gray" stroke-dasharray="4,3"/>')
        for j, (k, name, colour) in enumerate(routes + ([("w", "weights (MB)", "gray")] if key == "peak_mb" else [])):
            parts.append(f'<text x="{ox + pad + 8}" y="{36 + 14 * j}" fill="{colour}">{name}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, width, layers, where = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
        result = child_api(width, layers, where, fp16=kind == "api") if kind.startswith("api") else \
            child_ort(where) if kind == "ort" else child_trace(width, layers, where)
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upto-gb", type=float, default=0.7, help="largest model, GB of weights (3.3 for all)")
    parser.add_argument("--routes", default="api,pt,upstream",
                        help="api, api_fp32 (fp16=0: an ONNX past 2 GiB has external data), pt, upstream")
    parser.add_argument("--widths", default="", help="only these widths (comma-separated)")
    parser.add_argument("--limit-gb", type=float, default=10.0, help="kill a run past this resident memory")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    parser.add_argument("--out", type=Path, default=Path("reports/scale"))
    parser.add_argument("--merge", action="store_true", help="add this run's routes to OUT/scale.json")
    args = parser.parse_args(argv)
    routes = args.routes.split(",")
    if "upstream" in routes and shutil.which("pnnx", path=str(BIN)) is None:
        print("error: the upstream `pnnx` command is not installed beside this Python", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"machine": {"cpus": os.cpu_count(), "loadavg_before": [round(v, 2) for v in os.getloadavg()],
                          "python": platform.python_version()},
              "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seq": SEQ, "rows": []}
    previous = json.loads((args.out / "scale.json").read_text()) if args.merge and (args.out / "scale.json").exists() else None
    report["disk_mb_s"] = disk_mb_s(Path(os.environ.get("BENCH_TMP") or tempfile.gettempdir()))
    for width, layers in SIZES:
        if weight_bytes(width, layers) > args.upto_gb * 1e9 or (args.widths and str(width) not in args.widths.split(",")):
            continue
        row = one_size(width, layers, routes, args.limit_gb * 1024, args.timeout)
        report["rows"].append(row)
        print(json.dumps({k: v for k, v in row.items()}, default=str)[:2000], flush=True)
    report["machine"]["loadavg_after"] = [round(v, 2) for v in os.getloadavg()]
    if previous:  # this run's routes replace or join the earlier run's, size by size
        rows = {(r["width"], r["layers"]): r for r in previous["rows"]}
        for row in report["rows"]:
            rows.setdefault((row["width"], row["layers"]), {}).update(row)
        previous["rows"] = sorted(rows.values(), key=lambda r: r["weights_bytes"])
        previous.setdefault("later_runs", []).append({k: report[k] for k in ("machine", "time_utc", "disk_mb_s")} |
                                                     {"routes": routes})
        report = previous
    (args.out / "scale.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "scale.md").write_text(table(report))
    (args.out / "scale.svg").write_text(svg(report))
    print(table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
