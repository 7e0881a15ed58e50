"""benchmarks/bench_llm.py's probe: files that do not load (or kill the process running them)
are reported, not run in the benchmark's own process."""
from __future__ import annotations


import numpy as np
import pytest

from script_modules import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_llm")


@pytest.mark.parametrize("layer, loads", [("ReLU r 1 1 in0 out0", True), ("NoSuchLayer r 1 1 in0 out0", False)])
def test_probe_runs_the_files_in_a_child(bench, tmp_path, layer, loads):
    (tmp_path / "m.ncnn.param").write_text(f"7767517\n2 2\nInput in0 0 1 in0\n{layer}\n")
    (tmp_path / "m.ncnn.bin").write_bytes(b"")
    paths = {"ncnn.param": tmp_path / "m.ncnn.param", "ncnn.bin": tmp_path / "m.ncnn.bin"}
    why = bench.probe(paths, [np.ones((2, 3), np.float32)], tmp_path)
    assert (why == "") == loads, why
