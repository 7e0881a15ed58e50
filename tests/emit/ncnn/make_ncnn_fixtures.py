"""Regenerate fixtures/<case>/ with the upstream `pnnx` command: the PNNX graph our lowering
reads (model.pnnx.param/bin) and upstream's own ncnn.param to compare layer types and ids.

    .tox/env/bin/python tests/emit/ncnn/make_ncnn_fixtures.py [case ...]
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from upstream_fixture_cases import CASES, build  # noqa: E402

PNNX = Path(sys.executable).with_name("pnnx")
KEEP = ("model.pnnx.param", "model.pnnx.bin", "model.ncnn.param", "model.ncnn.bin")


def _shape_arg(inputs) -> str:
    suffix = {torch.float32: "f32", torch.int64: "i64"}
    return ",".join("[" + ",".join(map(str, t.shape)) + "]" + suffix[t.dtype] for t in inputs)


def trace(name: str, tmp: Path) -> str:
    """Build and trace in the main thread: the modules come from the global torch seed."""
    model, inputs = build(name)
    (tmp / name).mkdir()
    with torch.no_grad():
        torch.jit.trace(model, tuple(inputs), check_trace=False).save(str(tmp / name / "model.pt"))
    return _shape_arg(inputs)


def convert(name: str, folder: Path, shapes: str) -> str:
    proc = subprocess.run([str(PNNX), "model.pt", f"inputshape={shapes}"], cwd=folder,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return f"{name}: pnnx failed: {proc.stderr[-300:]}"
    dest = HERE / "fixtures" / name
    dest.mkdir(parents=True, exist_ok=True)
    for f in KEEP:
        shutil.copy(folder / f, dest / f)
    return f"{name}: ok"


if __name__ == "__main__":
    names = sys.argv[1:] or list(CASES)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        shapes = {name: trace(name, tmp) for name in names}
        with ThreadPoolExecutor(2) as pool:
            for line in pool.map(lambda n: convert(n, tmp / n, shapes[n]), names):
                print(line, flush=True)
