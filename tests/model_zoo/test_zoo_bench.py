"""benchmarks/bench_zoo.py's helpers (the timed runs themselves are the benchmark's job)."""
from __future__ import annotations


import pytest

from script_modules import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_zoo")


def test_param_ops_reads_the_header_count(bench, tmp_path):
    (tmp_path / "m.ncnn.param").write_text("7767517\n3 3\nInput in0 0 1 in0\nReLU r 1 1 in0 a\nReLU s 1 1 a out0\n")
    assert bench.param_ops(tmp_path / "m.ncnn.param") == 3
    assert bench.param_ops(tmp_path / "absent.param") is None


def test_sizes_names_artefacts_without_the_model_prefix(bench, tmp_path):
    for name, data in (("model.ncnn.bin", b"1234"), ("model_pnnx.py", b"ab"), ("model.pt", b"x"), ("other", b"")):
        (tmp_path / name).write_bytes(data)
    assert bench.sizes(tmp_path) == {"ncnn.bin": 4, "pnnx.py": 2}


def test_first_error_line_keeps_the_reason_of_a_failed_command(bench):
    e = SystemExit("error: python -c \nimport x\n failed:\nTraceback ...\nValueError: bad thing")
    assert bench.bench_convert.first_error_line(e) == "SystemExit: ValueError: bad thing"
    assert bench.bench_convert.first_error_line(RuntimeError("one\ntwo")) == "RuntimeError: one"


def test_table_prints_missing_numbers_as_dashes(bench, capsys):
    bench.print_table([{"model": "m", "convert": {"median_s": {"ours": 2.0, "upstream": None},
                                                   "ratio_ours_over_upstream": None,
                                                   "errors": {"upstream": "SystemExit: boom"}},
                        "sizes": {"ours": {"ncnn.bin": 2048}, "upstream": {}},
                        "pnnx_param_ops": {"ours": 5, "upstream": None}, "ncnn_layers": {"ours": 6},
                        "ncnn_cpu_ms": {"error": "RuntimeError: x"}}])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:6] == ["m", "2.0/-", "-", "5/-", "6/-", "2/-"]
    assert "convert upstream: SystemExit: boom" in out[2]
    assert "ncnn_cpu_ms: RuntimeError: x" in out[3]


def test_unknown_model_is_one_clear_error(bench, capsys):
    assert bench.main(["--models", "nosuchnet"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: no zoo model matches")


PARENT_AND_CHILD = """
import subprocess, sys
held = bytearray(150 * 2**20)
subprocess.run([sys.executable, "-c", "import time; b = bytearray(200 * 2**20); time.sleep(0.6)"], check=True)
"""


def test_a_commands_memory_counts_its_processes_together(bench, tmp_path):
    """Upstream's `pnnx` is a Python script waiting on a binary: both are resident at once, so the
    command's peak is their sum, not the larger of the two (bench_convert.measured)."""
    import sys

    wall, together, largest, cpu = bench.bench_convert.measured([sys.executable, "-c", PARENT_AND_CHILD], tmp_path)
    assert 200 <= largest < 300 and together >= largest + 140, (together, largest)
    assert 0 < cpu < wall + 5, (cpu, wall)  # the command's own CPU seconds, children included
