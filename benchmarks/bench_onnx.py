"""Benchmark: our NAME.pnnx.onnx against torch.onnx.export of the same model.

For resnet18, mobilenet_v2 (torchvision, weights=None), a TransformerEncoderLayer and an LSTM
model: ONNX node count and onnxruntime CPU latency (median over alternating runs, one thread),
plus the numeric agreement of each with torch. Also checks whether upstream pnnx's own
pnnx.onnx for resnet18 loads in onnxruntime.

    python benchmarks/bench_onnx.py [--runs 30] [--models resnet18,lstm] [--no-upstream]
    python benchmarks/bench_onnx.py --cases smoke|full     per-table export/match counts
"""
from __future__ import annotations

import argparse
import collections
import io
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn

from pnnx_conformance.backends.onnxruntime_cpu import OnnxRuntimeBackend
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import DEFAULT_OPSET, build_model


class LSTMModel(nn.Module):
    """Two-layer LSTM over a sequence, classifier on the last step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(64, 128, num_layers=2, batch_first=True)
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class ExplicitNonCausal(nn.Module):
    """Calls the layer with is_causal=False: torch.onnx.export(dynamo=False) of a bare
    TransformerEncoderLayer fails in torch 2.14 (is_causal is traced as a Tensor)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        return self.layer(x, is_causal=False)


def _models():
    import torchvision

    return {
        "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
        "transformer_encoder_layer": (
            lambda: nn.TransformerEncoderLayer(256, 8, 1024, batch_first=True), (1, 64, 256)),
        "lstm": (LSTMModel, (1, 32, 64)),
    }


def torch_export(model, x) -> onnx.ModelProto:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the dynamo exporter needs onnxscript, which is not installed here
        torch.onnx.export(model, (x,), buf, dynamo=False)
    return onnx.load_from_string(buf.getvalue())


def session(model: onnx.ModelProto):
    """onnxruntime CPU with the conformance backend's options (one thread, default graph
    optimisations)."""
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), OnnxRuntimeBackend().session_options(),
                                providers=["CPUExecutionProvider"])


def latency(models: dict, x: np.ndarray, runs: int) -> dict:
    """Median ms per model, timing the models in turn within each round."""
    sessions = {k: session(m) for k, m in models.items()}
    feeds = {k: {s.get_inputs()[0].name: x} for k, s in sessions.items()}
    for k, s in sessions.items():  # warm-up
        s.run(None, feeds[k])
    times = collections.defaultdict(list)
    for _ in range(runs):
        for k, s in sessions.items():
            t0 = time.perf_counter()
            s.run(None, feeds[k])
            times[k].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def max_error(model, x, want: torch.Tensor) -> float:
    s = session(model)
    got = s.run(None, {s.get_inputs()[0].name: x.numpy()})[0]
    return float(np.abs(got - want.numpy()).max())


def bench_one(name: str, make, shape, runs: int) -> dict:
    torch.manual_seed(0)
    model = make().eval()
    x = torch.rand(*shape)
    with torch.no_grad():
        want = model(x)
    graph = capture(model, (x,))
    ours32 = build_model(graph, fp16=False)
    ours16 = build_model(graph, fp16=True)
    for m in (ours32, ours16):
        onnx.checker.check_model(m, full_check=True)
    theirs = torch_export(ExplicitNonCausal(model) if isinstance(
        model, nn.TransformerEncoderLayer) else model, x)
    models = {"pnnx.onnx": ours32, "pnnx.onnx fp16": ours16, "torch.onnx": theirs}
    ms = latency(models, x.numpy(), runs)
    casts = sum(1 for n in ours16.graph.node if n.op_type == "Cast")
    return {
        "name": name,
        "nodes": {k: len(m.graph.node) for k, m in models.items()},
        "fp16_weight_casts": casts,
        "ops": {k: collections.Counter(n.op_type for n in m.graph.node) for k, m in models.items()},
        "opset": {k: m.opset_import[0].version for k, m in models.items()},
        "ms": ms,
        "err": {k: max_error(m, x, want) for k, m in models.items()},
        "pnnx_ops": len([op for op in graph.ops if op.type not in ("pnnx.Input", "pnnx.Output")]),
    }


def upstream_check() -> str:
    """Does upstream pnnx's pnnx.onnx for resnet18 load in onnxruntime?"""
    import onnxruntime as ort
    import torchvision

    exe = shutil.which("pnnx") or str(Path(sys.executable).with_name("pnnx"))
    if not Path(exe).exists():
        return "upstream pnnx: command not found, not checked"
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(0)
        model = torchvision.models.resnet18(weights=None).eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.trace(model, torch.rand(1, 3, 224, 224)).save(f"{tmp}/resnet18.pt")
        subprocess.run([exe, "resnet18.pt", "inputshape=[1,3,224,224]"], cwd=tmp,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        path = Path(tmp, "resnet18.pnnx.onnx")
        if not path.exists():
            return "upstream pnnx: wrote no resnet18.pnnx.onnx"
        up = onnx.load(path)
        kinds = collections.Counter(n.op_type for n in up.graph.node).most_common(3)
        try:
            ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            verdict = "loads in onnxruntime"
        except Exception as err:  # report what onnxruntime says, whatever it is
            reason = re.search(r"(Missing opset[^.]*)", str(err))
            verdict = f"does NOT load in onnxruntime {ort.__version__}: " + \
                (reason.group(1) if reason else str(err).strip().splitlines()[0][-160:])
        return (f"upstream pnnx resnet18.pnnx.onnx: opset_import={list(up.opset_import) or '[]'}"
                f" ir_version={up.ir_version}, {len(up.graph.node)} nodes (op types are pnnx "
                f"names, e.g. {kinds}); {verdict}")


def case_counts(tier: str, verbose: bool) -> None:
    """Per table: cases (and distinct operator rows) by the conformance harness's onnxruntime
    parity status for the reference converter (the unit `pnnx-conformance run --backend
    onnxruntime --converter reference` records), in this process."""
    from pnnx_conformance.checks import Executor
    from pnnx_conformance.results import STATUSES
    from pnnx_conformance.units import Unit
    from pnnx_op_cases.registry import select

    counts = collections.defaultdict(collections.Counter)
    rows = collections.defaultdict(lambda: collections.defaultdict(set))
    with tempfile.TemporaryDirectory() as work:
        ex = Executor(Path(work), tier=tier)
        for case in select(tier=tier):
            res = ex.execute(Unit(case.id, "reference", "parity", "onnxruntime", "fp32"))
            counts[case.table][res.status] += 1
            rows[case.table][res.status].add(case.op)
            if verbose and res.status != "pass":
                print(f"  {res.status:15s} {case.id}: {res.error[:150]}")
    print(f"op cases ({tier} tier): cases [distinct rows] per onnxruntime parity status")
    for table in sorted(counts):
        parts = [f"{s}={counts[table][s]} [{len(rows[table][s])}]" for s in STATUSES if counts[table][s]]
        print(f"  {table:7s} {sum(counts[table].values()):5d} cases: " + ", ".join(parts)
              + f"; rows with >=1 passing case: {len(rows[table]['pass'])}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--models", default=",".join(_models()))
    ap.add_argument("--no-upstream", action="store_true")
    ap.add_argument("--cases", choices=("smoke", "full"), help="count op cases instead")
    ap.add_argument("--verbose", action="store_true", help="with --cases: list the failures")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.cases:
        warnings.filterwarnings("ignore")
        case_counts(args.cases, args.verbose)
        return 0
    table = _models()
    print(f"onnxruntime CPU, 1 thread, median of {args.runs} alternating runs; "
          f"our opset {DEFAULT_OPSET}, torch.onnx.export(dynamo=False) at its default opset")
    header = f"{'model':28s} {'pnnx ops':>8s} {'nodes ours/fp16/torch':>22s} " \
             f"{'ms ours':>8s} {'ms fp16':>8s} {'ms torch':>8s} {'max|err| ours/torch':>20s}"
    print(header)
    for name in args.models.split(","):
        make, shape = table[name]
        r = bench_one(name, make, shape, args.runs)
        n, ms, err = r["nodes"], r["ms"], r["err"]
        print(f"{name:28s} {r['pnnx_ops']:8d} "
              f"{n['pnnx.onnx']:>6d}/{n['pnnx.onnx fp16']:>4d}/{n['torch.onnx']:<5d}".ljust(60)
              + f" {ms['pnnx.onnx']:8.3f} {ms['pnnx.onnx fp16']:8.3f} {ms['torch.onnx']:8.3f}"
              f" {err['pnnx.onnx']:9.2e}/{err['torch.onnx']:.2e}")
        for key in ("pnnx.onnx", "torch.onnx"):
            ops = ", ".join(f"{k}:{v}" for k, v in r["ops"][key].most_common())
            print(f"    {key:10s} opset {r['opset'][key]}: {ops}")
        print(f"    fp16 adds {r['fp16_weight_casts']} Cast nodes (one per weight, folded by "
              f"onnxruntime at load)")
    if not args.no_upstream:
        print(upstream_check())
    return 0


if __name__ == "__main__":
    sys.exit(main())
