"""benchmarks/bench_ncnn.py's helpers: the timing child, the verdict against the noise and the
table (the timed zoo runs themselves are the benchmark's job)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from script_modules import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_ncnn")


def _relu_files(folder: Path, layer: str = "ReLU") -> np.ndarray:
    folder.mkdir()
    (folder / "model.ncnn.param").write_text(f"7767517\n2 2\nInput in0 0 1 in0\n{layer} r 1 1 in0 out0\n")
    (folder / "model.ncnn.bin").write_bytes(b"")
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 4, 5)).astype(np.float32)
    np.savez(folder.parent / "inputs.npz", **{"0": x})
    return x


@pytest.mark.parametrize("mode", ["default", "fp32"])
def test_a_child_times_the_files_and_saves_what_they_computed(bench, tmp_path, mode):
    x = _relu_files(tmp_path / "ours")
    times, saved = bench.time_one(tmp_path / "ours", mode, warmup=1, runs=3)
    assert set(times) == {"ms", "cpu_ms"} and all(v >= 0 for v in times.values())
    assert bench.max_abs_diff(saved, [np.maximum(x, 0)]) == 0.0


def test_files_ncnn_cannot_load_are_one_error_line(bench, tmp_path):
    _relu_files(tmp_path / "upstream", layer="NoSuchLayer")
    with pytest.raises(RuntimeError, match=r"^exit 1: .*load_param failed"):
        bench.time_one(tmp_path / "upstream", "default", warmup=1, runs=1)


def _result(ours_cpu, up_cpu, spread=0.05):
    return {"ours": {"cpu_ms": ours_cpu, "ms": 2 * ours_cpu, "noise_cpu_ms": spread, "noise_ms": spread,
                     "max_abs_vs_torch": 1e-4},
            "upstream": {"cpu_ms": up_cpu, "ms": 2 * up_cpu, "noise_cpu_ms": spread, "noise_ms": spread,
                         "max_abs_vs_torch": 2e-4},
            "errors": {}}


@pytest.mark.parametrize("ours, verdict", [(10.0, "same"), (10.4, "same"), (10.6, "slower"), (9.4, "faster")])
def test_the_verdict_reads_cpu_time_against_the_noise(bench, ours, verdict):
    assert bench.verdict(_result(ours, 10.0)) == verdict


def test_table_shows_both_converters_and_a_failed_one(bench):
    records = [{"model": "a", "layers": {"ours": {"ReLU": 2}, "upstream": {"ReLU": 3}}, "convert_errors": {},
                "modes": {"default": _result(11.0, 10.0, spread=0.02)}},
               {"model": "b", "layers": {"ours": {"ReLU": 1}}, "convert_errors": {},
                "modes": {"default": {"ours": _result(5.0, 1.0)["ours"], "errors": {"upstream": "exit 1: boom"}}}}]
    lines = bench.table(records, "default")
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert cells[:7] == ["a", "2/3", "11.00", "10.00", "1.10", "2%", "slower"]
    assert cells[-1] == "1.0e-04 / 2.0e-04"
    assert [c.strip() for c in lines[3].split("|")[1:6]] == ["b", "1/-", "5.00", "-", "-"]
    assert "b: upstream | exit 1: boom" in lines[4]
    assert lines[-1].startswith("| **median ratio** |") and "**1.10**" in lines[-1]


def test_unknown_mode_is_one_clear_error(bench, capsys):
    assert bench.main(["resnet18", "--modes", "fp8"]) == 2
    assert capsys.readouterr().err.startswith("error: --modes takes some of default, fp32")
