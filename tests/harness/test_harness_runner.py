"""Merging, the floor, JUnit, the command line, freezing and determinism."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from pnnx_conformance import cli
from pnnx_conformance.errors import HarnessError
from pnnx_conformance.freeze import freeze, verify
from pnnx_conformance.junit import write_junit
from pnnx_conformance.merge import merge_results
from pnnx_conformance.results import Result, write_results
from pnnx_conformance.runner import RunOptions, _run_errors, run

PROVIDER = "harness_cases:cases"


def _r(case, status, backend=None, check="parity"):
    return Result(case=case, op="F.relu", table="F", converter="reference", check=check,
                  status=status, backend=backend, precision="fp32" if backend else None)


def test_merge_combines_shards_and_refuses_overlap(tmp_path):
    write_results(tmp_path / "a" / "results.jsonl", [_r("a/1", "pass", "torch")])
    write_results(tmp_path / "b" / "results.jsonl", [_r("b/1", "crash", "torch")])
    merged = merge_results([tmp_path])
    assert sorted(r.case for r in merged) == ["a/1", "b/1"]
    write_results(tmp_path / "c" / "results.jsonl", [_r("a/1", "pass", "torch")])
    with pytest.raises(HarnessError, match="also in"):
        merge_results([tmp_path])


def test_floor_counts_executed_cases_only():
    opts = RunOptions(out=None, tier="smoke")
    results = [_r(f"c/{i}", "skipped", "torch") for i in range(100)] + [_r("x/1", "pass", "torch")]
    errors = _run_errors(results, opts, 101)
    assert any("only 1 of 101 cases executed" in e for e in errors)
    assert _run_errors(results, RunOptions(out=None, tier="smoke", ops=["F.relu"]), 101) == []
    assert any("xpass" in e for e in _run_errors([_r("x/1", "xpass", "torch")], opts, 1))


def test_junit_has_one_testcase_per_record(tmp_path):
    rs = [_r("a/1", "pass", "torch"), _r("a/1", "fail-numeric", "ncnn-cpu"), _r("a/1", "crash", "hang"),
          _r("a/1", "not-supported", "onnxruntime")]
    write_junit(tmp_path / "j.xml", rs)
    root = ET.parse(tmp_path / "j.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 4
    assert len(root.findall(".//failure")) == 1 and len(root.findall(".//error")) == 1
    assert len(root.findall(".//skipped")) == 1


@pytest.mark.parametrize("argv, message", [
    (["run", "--out", "x", "--shard", "5/2"], "--shard 5/2"),
    (["run", "--out", "x", "--backend", "no-such-backend"], "unknown backend 'no-such-backend'"),
    (["run", "--out", "x", "--converter", "nope"], "unknown converter 'nope'"),
    (["merge", "does-not-exist", "--out", "x"], "no such results file"),
])
def test_cli_errors_are_one_line(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1


def test_freeze_is_reproducible_and_verifiable(tmp_path):
    a = freeze(tmp_path / "a", "full", provider=PROVIDER)
    b = freeze(tmp_path / "b", "full", provider=PROVIDER)
    assert a["sha256"] == b["sha256"] and len(a["cases"]) == 4
    assert (tmp_path / "a" / "nn.Conv2d__k3_p1" / "expected.npz").is_file()
    assert verify(tmp_path / "a") == []
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    manifest["cases"][0]["expected_sha256"] = "0" * 64
    (tmp_path / "a" / "manifest.json").write_text(json.dumps(manifest))
    assert verify(tmp_path / "a") == [f"{manifest['cases'][0]['id']}: expected changed"]


def _strip_timing(path):
    return [{k: v for k, v in json.loads(line).items() if k != "time_s"} for line in open(path)]


@pytest.mark.slow
def test_two_runs_give_identical_results(tmp_path):
    outs = []
    for name in ("one", "two"):
        opts = RunOptions(out=tmp_path / name, tier="full", converters=["reference"],
                          backends=["torch", "pnnx-python", "ncnn-cpu", "onnxruntime"],
                          cases_provider=PROVIDER, ops=["nn.Conv2d", "F.relu", "torch.add"],
                          jobs=2, progress=False)
        summary = run(opts)
        assert summary.errors == []
        outs.append(_strip_timing(tmp_path / name / "results.jsonl"))
    assert outs[0] == outs[1]
    statuses = {r["status"] for r in outs[0]}
    assert "pass" in statuses and len(outs[0]) == 3 * (4 + 5)


def test_run_help_names_every_builtin_converter_and_the_default_set():
    from pnnx_conformance import converters
    from pnnx_conformance.cli import CONVERTER_HELP

    named = {w.strip(" ,") for w in CONVERTER_HELP.split("(")[0].split("|")}
    assert set(converters.BUILTIN) <= named
    assert set(converters.BUILTIN) - set(converters.DEFAULT) == {"reference-onnx-dynamo"}


def test_a_full_disk_while_writing_repro_bundles_keeps_the_results(tmp_path, monkeypatch):
    """The bundles come last: an OSError there is one error line of the run, not a traceback
    that loses an hour of results."""
    import errno

    from pnnx_conformance import runner

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(runner, "_repro_bundles", full_disk)
    opts = RunOptions(out=tmp_path / "out", tier="full", converters=["reference"], backends=["torch"],
                      cases_provider=PROVIDER, ops=["F.relu"], jobs=1, progress=False)
    summary = run(opts)
    assert summary.errors == [f"repro bundles not written under {tmp_path / 'out' / 'repro'}: No space left on device"]
    assert (tmp_path / "out" / "results.jsonl").read_text().strip()


def test_a_folder_that_cannot_be_written_is_one_error_line(tmp_path, capsys):
    write_results(tmp_path / "a" / "results.jsonl", [_r("a/1", "pass", "torch")])
    (tmp_path / "file").write_text("")
    assert cli.main(["merge", str(tmp_path / "a"), "--out", str(tmp_path / "file" / "merged")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "file" in err
