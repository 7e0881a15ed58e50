"""Shared helpers for the ncnn export tests: a PNNX graph (our capture of a fixture model or
an op case, or the upstream pnnx graph stored in fixtures/) -> our ncnn lowering. Running and
comparing is the conformance harness's (conformance_runs)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import torch

from pnnx_op_cases.registry import get_case
from upstream_fixture_cases import build
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
    """Our capture of a fixture model, or of an op case ("nn.Conv2d/k1_relu6")."""
    if "/" in name:
        case = get_case(name)
        return capture(case.make_model(), tuple(case.make_inputs()))
    model, inputs = build(name)
    return capture(model, tuple(inputs))


@functools.lru_cache(maxsize=None)
def exported(name: str, source: str = "ours", fp16: bool = True) -> Path:
    """Our ncnn files for a fixture model or an op case (written once per test process), lowered
    from our captured graph (`ours`) or from upstream pnnx's stored graph (`upstream`); returns
    the base path."""
    graph = captured_graph(name) if source == "ours" else fixture_graph(name)
    base = _OUT / f"{name.replace('/', '__')}_{source}{'' if fp16 else '_fp32'}"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=fp16)
    return base


def lowered(folder: Path, model, inputs, fp16: bool = False) -> Path:
    """`model` captured on `inputs` (cloned: the capture may not write into them) and lowered to
    ncnn files `folder/m.*` (fp32 weights unless `fp16`); returns the base path."""
    graph = capture(model.eval(), tuple(t.clone() for t in inputs))
    base = folder / "m"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=fp16)
    return base


def layer_types(path) -> list[str]:
    """The layer type of each layer line of an ncnn.param file, in order."""
    return [line.split()[0] for line in Path(path).read_text().splitlines()[2:]]


def torch_outputs(model, inputs) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(*inputs)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o.numpy() for o in out]


def param_layers(path) -> list[tuple[str, tuple[str, ...]]]:
    """(type, sorted param keys) per layer line of an ncnn.param file."""
    rows = []
    for line in Path(path).read_text().splitlines()[2:]:
        parts = line.split()
        nin, nout = int(parts[2]), int(parts[3])
        rows.append((parts[0], tuple(sorted(p.split("=")[0] for p in parts[4 + nin + nout:]))))
    return rows
