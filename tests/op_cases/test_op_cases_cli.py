"""`pnnx-cases` list / show / write, and its one-line errors."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from pnnx_op_cases import registry, tables
from pnnx_op_cases.cli import main


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_list_filters(capsys):
    rc, out, _ = run(capsys, "list", "--op", "nn.Conv2d", "--tier", "smoke")
    ids = out.split()
    assert rc == 0 and ids == [c.id for c in registry.select(op="nn.Conv2d", tier="smoke")]
    assert ids and all(i.startswith("nn.Conv2d/") for i in ids)
    rc, out, _ = run(capsys, "list", "--table", "nn", "--tag", "no-trace")
    assert rc == 0 and out.split() == [c.id for c in registry.select(table="nn", tag="no-trace")]
    rc, out, _ = run(capsys, "list", "--pattern", "nn.LSTM/*")
    assert out.split() == [c.id for c in registry.select(op="nn.LSTM")]


def test_list_counts(capsys):
    rc, out, _ = run(capsys, "list", "--counts")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].split() == ["table", "rows", "covered", "smoke", "full"]
    by_table = {ln.split()[0]: [int(v) for v in ln.split()[1:]] for ln in lines[1:]}
    assert set(by_table) == set(tables.TABLES) | {"total"}
    nn_rows, _, nn_smoke, nn_full = by_table["nn"]
    assert nn_rows == len(tables.load_table("nn"))
    assert nn_smoke == len(registry.select(table="nn", tier="smoke"))
    assert nn_full == len(registry.select(table="nn"))
    assert by_table["total"][3] == len(registry.all_cases())
    assert by_table["total"][0] == sum(by_table[t][0] for t in tables.TABLES)


def test_show_prints_source_and_inputs(capsys):
    case = registry.get_case("nn.LSTM/h0")
    rc, out, _ = run(capsys, "show", case.id)
    assert rc == 0 and case.source.strip() in out
    assert "# x2: shape (1, 2, 8) f32 in [-1, 1)" in out
    assert "multi-output" in out


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_write_produces_a_reproducible_package(capsys, tmp_path):
    case = registry.get_case("nn.MaxPool2d/k2_indices")
    rc, out, _ = run(capsys, "write", case.id, "--out", str(tmp_path / "w"))
    assert rc == 0
    d = tmp_path / "w"
    stem = case.safe_name
    names = sorted(os.listdir(d))
    assert names == sorted([f"{stem}.py", f"{stem}.pt", f"{stem}.in0.npy",
                            f"{stem}.out0.npy", f"{stem}.out1.npy"])
    x = np.load(d / f"{stem}.in0.npy")
    assert np.array_equal(x, case.make_inputs()[0].numpy())
    traced = torch.jit.load(str(d / f"{stem}.pt"))
    got = traced(torch.from_numpy(x))
    assert np.array_equal(got[0].numpy(), np.load(d / f"{stem}.out0.npy"))
    # the standalone script rebuilds the same inputs and weights on its own
    proc = subprocess.run([sys.executable, str(d / f"{stem}.py")], capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    assert proc.stdout.count("matches saved output") == 2, proc.stdout


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_written_files_get_the_users_new_file_mode(capsys, tmp_path, mask, mode):
    """Issue 33 item 13: every file was 0600 (mkstemp's), whatever the umask."""
    previous = os.umask(mask)
    try:
        rc, _, _ = run(capsys, "write", "nn.ReLU/default", "--out", str(tmp_path / "w"))
    finally:
        os.umask(previous)
    assert rc == 0
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in (tmp_path / "w").iterdir()} == \
        {p.name: oct(mode) for p in (tmp_path / "w").iterdir()}


def test_write_no_trace_case_skips_pt(capsys, tmp_path):
    case = registry.select(table="nn", tag="no-trace")[0]
    rc, _, err = run(capsys, "write", case.id, "--out", str(tmp_path))
    assert rc == 0 and "no .pt" in err
    assert not any(n.endswith(".pt") for n in os.listdir(tmp_path))
    assert f"{case.safe_name}.py" in os.listdir(tmp_path)


@pytest.mark.parametrize("argv, needle", [
    (["show", "nn.Conv2d/no_such"], "unknown case id"),
    (["write", "nn.Nope/x", "--out", "."], "unknown case id"),
    (["write", "nn.ReLU/default"], "--out"),
    (["list", "--table", "xx"], "invalid choice"),
    (["list", "--tier", "huge"], "invalid choice"),
    (["list", "--op", "nn.Nope"], "unknown operator"),
    (["list", "--tag", "zzz"], "unknown tag"),
    (["frobnicate"], "invalid choice"),
    ([], "required"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys, argv, needle):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and needle in err


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "pnnx-cases")
    proc = subprocess.run([exe, "show", "nope/x"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown case id")
    assert "Traceback" not in proc.stderr


def test_standalone_inputs_are_bit_identical_for_every_dtype():
    from pnnx_op_cases.builders import bools, call_case, ints, rand
    from pnnx_op_cases.standalone import standalone_source

    case = call_case("torch.where", "mixed", "torch.where(x0, x1.float(), x2.float() + x3)",
                     [bools(3, 4), ints(3, 4, low=-5, high=5, dtype="i32"), ints(3, 4),
                      rand(3, 4, low=-2, high=3, dtype="f16")])
    ns: dict = {"__name__": "standalone_under_test"}
    exec(standalone_source(case), ns)
    for a, b in zip(ns["make_inputs"](), case.make_inputs()):
        assert a.dtype == b.dtype and torch.equal(a, b)
