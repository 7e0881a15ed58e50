"""ncnn latency of decoder-LLM graphs: a LLaMA-style block (the zoo's hand-written one and
transformers' LlamaForCausalLM from a small config) and the decode step with a key/value cache,
converted three ways: ours with the fusions (RMSNorm, RotaryEmbed layers), ours with them off
(`write_ncnn(fuse=False)`), and upstream pnnx from the traced .pt (where its ncnn files load).
CPU, ncnn's default options, one thread, runs alternating between the variants, median;
each variant's max |difference| from torch at fp32 beside it.

    .tox/env/bin/python benchmarks/bench_llm.py [--runs 50] [--json out.json] [model ...]
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

import numpy as np
import torch

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends import load_backend
from pnnx_model_zoo.converters import ZooUpstream
from pnnx_model_zoo.zoo import all_cases
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn

MODELS = {"llama_block": "models.llama_block/d64_h4_l2", "hf_llama": "models.hf_llama/tiny",
          "decode_step": "models.llm_decode_step/d64_gqa"}
VARIANTS = ("fused", "unfused", "upstream")


def case_of(name: str):
    return next(c for c in all_cases() if c.id == MODELS[name])


def export_ours(model, inputs, folder: Path, fuse: bool) -> dict:
    base = folder / ("fused" if fuse else "unfused")
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False, fuse=fuse)
    return {"ncnn.param": Path(f"{base}.ncnn.param"), "ncnn.bin": Path(f"{base}.ncnn.bin"),
            "ncnn.py": Path(f"{base}_ncnn.py")}


def export_upstream(case, model, inputs, folder: Path) -> tuple[dict | None, str]:
    work = folder / "upstream"
    work.mkdir()
    arts = ZooUpstream().convert(case, work, model, inputs, fp16=False)
    kinds = ("ncnn.param", "ncnn.bin")
    return ({k: v for k, v in arts.paths.items() if k.startswith("ncnn")}, "") if arts.has(*kinds) else \
        (None, arts.missing_reason(kinds))


def layer_types(paths: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in Path(paths["ncnn.param"]).read_text().splitlines()[2:]:
        counts[line.split()[0]] = counts.get(line.split()[0], 0) + 1
    return counts


PROBE = """
import json, sys
import numpy as np
from pathlib import Path
from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends import load_backend
paths, feed = json.loads(sys.argv[1]), np.load(sys.argv[2])
b = load_backend("ncnn-cpu")
b.prepare(Artefacts("probe", "-", Path("."), {k: Path(v) for k, v in paths.items()}), "default")
b.run([feed[k] for k in sorted(feed.files, key=int)])
"""


def probe(paths: dict, feed: list, folder: Path) -> str:
    """'' when the files load and run in a child process; else why not (upstream's LLaMA files
    corrupt the heap of the process that runs them)."""
    np.savez(folder / "feed.npz", **{str(i): x for i, x in enumerate(feed)})
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps({k: str(v) for k, v in paths.items()}),
                           str(folder / "feed.npz")], capture_output=True, text=True, timeout=300)
    if done.returncode == 0:
        return ""
    lines = [x for x in done.stderr.splitlines() if x.strip() and not x.startswith("[")]
    return f"exit {done.returncode}: {lines[-1][:120] if lines else ''}"


class Variant:
    """One converted model in the conformance ncnn backend (default options, prepared once)."""

    def __init__(self, name: str, paths: dict, precision: str) -> None:
        self.backend = load_backend("ncnn-cpu")
        self.backend.prepare(Artefacts(name, "-", Path("."), paths), precision)

    def __call__(self, inputs: list) -> list:
        return self.backend.run(inputs)


def measure(name: str, runs: int) -> dict:
    case = case_of(name)
    model, inputs = case.make_model(), case.make_inputs()
    with torch.no_grad():
        want = model(*inputs)
    want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
    feed = [x.numpy() for x in inputs]
    row: dict = {"model": name}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = {"fused": export_ours(model, inputs, folder, True), "unfused": export_ours(model, inputs, folder, False)}
        up, why = export_upstream(case, model, inputs, folder)
        timers = {}
        for variant in VARIANTS:
            if variant == "upstream" and up is None:
                row[variant] = {"error": why}
                continue
            p = paths.get(variant, up)
            why = probe(p, feed, folder)
            if why:
                row[variant] = {"error": f"ncnn: {why}"}
                continue
            try:
                got = Variant(variant, p, "fp32")(feed)
                timers[variant] = Variant(variant, p, "default")
            except Exception as err:  # upstream's files that do not load or run
                row[variant] = {"error": f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"}
                continue
            row[variant] = {"layers": sum(layer_types(p).values()),
                            "fused_layers": {k: v for k, v in layer_types(p).items()
                                             if k in ("RMSNorm", "RotaryEmbed", "SDPA")},
                            "max_abs_vs_torch": max(float(np.abs(g - w).max()) for g, w in zip(got, want))}
        times = {k: [] for k in timers}
        for _ in range(runs):  # alternate so that machine load hits every variant alike
            for k, run in timers.items():
                start = time.perf_counter()
                run(feed)
                times[k].append(time.perf_counter() - start)
        for k in timers:
            row[k]["median_ms"] = 1000 * statistics.median(times[k])
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"some of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    rows = [measure(m, args.runs) for m in args.models or MODELS]
    print(f"{'model':<12} {'variant':<9} {'layers':>6} {'median ms':>10} {'max|d| vs torch':>16}  fused layers / error")
    for r in rows:
        for k in VARIANTS:
            m = r[k]
            if "error" in m or "median_ms" not in m:
                print(f"{r['model']:<12} {k:<9} {'-':>6} {'-':>10} {'-':>16}  {m.get('error', '')[:90]}")
                continue
            print(f"{r['model']:<12} {k:<9} {m['layers']:>6} {m['median_ms']:>10.3f} {m['max_abs_vs_torch']:>16.2e}  "
                  f"{m['fused_layers']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
