"""Shared helpers for the ncnn export tests: a PNNX graph (from our capture, or the upstream
pnnx graph stored in fixtures/) -> our ncnn lowering -> run in ncnn -> compare with torch."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import ncnn
import numpy as np
import torch

from ncnn_export_cases import build
from pnnx_conformance.backends.ncnn_backend import declared_batch_indices
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.formats import pnnx_param

FIXTURES = Path(__file__).resolve().parent / "fixtures"
_OUT = Path(tempfile.mkdtemp(prefix="ncnn_export_"))

FP32 = dict(atol=1e-4, rtol=1e-3)
LOW_PRECISION = dict(atol=2e-2, rtol=2e-2)  # fp16 storage/arithmetic: ~3 decimal digits per layer


def fixture_graph(name: str):
    return pnnx_param.load(FIXTURES / name / "model.pnnx.param")


def upstream_cases() -> list[str]:
    """Every stored upstream case (a missing .bin then fails its tests instead of hiding them)."""
    cases = sorted(p.name for p in FIXTURES.iterdir() if (p / "model.pnnx.param").exists())
    assert cases, f"no upstream fixtures under {FIXTURES}"
    return cases


def captured_graph(name: str):
    model, inputs = build(name)
    return capture(model, tuple(inputs))


@functools.lru_cache(maxsize=None)
def exported(name: str, source: str = "ours", fp16: bool = True) -> Path:
    """Our ncnn files for a case (written once per test process), lowered from our captured
    graph (`ours`) or from upstream pnnx's stored graph (`upstream`); returns the base path."""
    graph = captured_graph(name) if source == "ours" else fixture_graph(name)
    base = _OUT / f"{name}_{source}{'' if fp16 else '_fp32'}"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=fp16)
    return base


NO_BATCH = 233  # ncnn's batch index for "dim 0 is data, not a batch"


def run_ncnn(base: Path, inputs, n_out: int, mode: str = "fp32", batchless: bool = False) -> list[np.ndarray]:
    """Run an exported model; mode: fp32 (low precision off), default (ncnn's options), vulkan
    (ncnn's options on the GPU), vulkan-fp32 (the GPU with low precision off). Each blob is fed
    and read with the batch index `{base}_ncnn.py` declares for it; without that file,
    `batchless` feeds and reads every blob whole, else dim 0 of a >= 2-d input is its batch."""
    declared = declared_batch_indices(f"{base}_ncnn.py")
    net = ncnn.Net()
    if mode in ("fp32", "vulkan-fp32"):
        for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage"):
            setattr(net.opt, flag, False)
    net.opt.use_vulkan_compute = mode.startswith("vulkan")
    net.opt.num_threads = 1
    assert net.load_param(f"{base}.ncnn.param") == 0
    assert net.load_model(f"{base}.ncnn.bin") == 0
    ex = net.create_extractor()
    for i, t in enumerate(inputs):
        if t.dtype == torch.bool:  # a bool blob is float 0/1, as the conformance backend feeds it
            t = t.float()
        elif not t.is_floating_point():  # integer indices are int32 words (Embed)
            t = t.to(torch.int32)
        batch_index = declared.get(f"in{i}", NO_BATCH if batchless or t.dim() < 2 else 0)
        ex.input(f"in{i}", ncnn.Mat(t.numpy(), batch_index=batch_index).clone())
    outs = []
    for i in range(n_out):
        ret, mat = ex.extract(f"out{i}")
        assert ret == 0, f"extract out{i} failed"
        batch_index = declared.get(f"out{i}", NO_BATCH if batchless else 0)
        outs.append(np.array(mat.numpy(batch_index=batch_index)).copy())
    del ex
    net.clear()
    return outs


def torch_outputs(model, inputs) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(*inputs)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o.numpy() for o in out]


def assert_outputs_match(got, expected, tol: dict, what: str) -> None:
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, f"{what} out{i}: shape {g.shape} != {e.shape}"
        np.testing.assert_allclose(g, e, err_msg=f"{what} out{i}", **tol)


def param_layers(path) -> list[tuple[str, tuple[str, ...]]]:
    """(type, sorted param keys) per layer line of an ncnn.param file."""
    rows = []
    for line in Path(path).read_text().splitlines()[2:]:
        parts = line.split()
        nin, nout = int(parts[2]), int(parts[3])
        rows.append((parts[0], tuple(sorted(p.split("=")[0] for p in parts[4 + nin + nout:]))))
    return rows
