"""The default run is one `run` of every converter, with the model zoo in the same worker slots
(tox.ini): its records must be those of the routes run one by one, and of each stream run alone."""
from __future__ import annotations

import json

import pytest

from pnnx_conformance.pool import Stream
from pnnx_conformance.runner import RunOptions, run
from pnnx_conformance.units import Unit
from pnnx_conformance.worker import WorkerConfig

PROVIDER = "harness_cases:cases"
BACKENDS = ["torch", "pnnx-python", "onnxruntime", "ncnn-cpu"]
CONVERTERS = ["reference", "reference-pt", "upstream"]


def _records(path) -> list[dict]:
    """Every field but the time a record took."""
    rows = [{k: v for k, v in json.loads(line).items() if k != "time_s"} for line in open(path)]
    return sorted(rows, key=lambda r: (r["case"], r["converter"], r["check"], r["backend"] or "", r["precision"] or ""))


def _opts(out, converters, jobs=2):
    return RunOptions(out=out, tier="full", converters=converters, backends=BACKENDS, cases_provider=PROVIDER,
                      ops=["nn.Conv2d", "F.relu"], jobs=jobs, progress=False)


# the two tests below compare with the same runs of one route alone: made once, in one worker
# (tox.ini's `--dist loadgroup` keeps the group together)
ALONE = pytest.mark.xdist_group("harness_one_run")


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """The records of `run` with one converter alone (each run once for the module), in one worker
    process: the runs they are compared with share two, so the records hold whatever the number of workers."""
    made: dict[str, list[dict]] = {}

    def records(converter: str) -> list[dict]:
        if converter not in made:
            out = tmp_path_factory.mktemp(f"alone-{converter}")
            assert run(_opts(out, [converter], jobs=1)).errors == []
            made[converter] = _records(out / "results.jsonl")
        return made[converter]

    return records


@pytest.mark.slow
@ALONE
def test_every_route_in_one_run_gives_the_records_of_the_routes_run_one_by_one(tmp_path, alone):
    one_by_one = [r for converter in CONVERTERS for r in alone(converter)]
    assert run(_opts(tmp_path / "all", CONVERTERS)).errors == []
    together = _records(tmp_path / "all" / "results.jsonl")
    assert together == sorted(one_by_one, key=lambda r: (r["case"], r["converter"], r["check"], r["backend"] or "",
                                                         r["precision"] or ""))
    assert {r["converter"] for r in together} == set(CONVERTERS) and "pass" in {r["status"] for r in together}


@pytest.mark.slow
@ALONE
def test_a_stream_sharing_the_run_s_workers_gives_the_records_it_gives_alone(tmp_path, alone):
    side: list = []
    units = [Unit("F.relu/r4", "upstream", "convert"), Unit("F.relu/r4", "upstream", "parity", "torch", "fp32"),
             Unit("nn.Conv2d/k3_p1", "upstream", "convert")]
    workroot = tmp_path / "side-work"
    stream = Stream(units, WorkerConfig(str(workroot), "full", PROVIDER), side.append)
    assert run(_opts(tmp_path / "shared", ["reference"]), before=[stream]).errors == []
    assert _records(tmp_path / "shared" / "results.jsonl") == alone("reference")
    assert [(r.case, r.check, r.status) for r in sorted(side, key=lambda r: r.key)] == \
        [("F.relu/r4", "convert", "pass"), ("F.relu/r4", "parity", "pass"), ("nn.Conv2d/k3_p1", "convert", "pass")]


def _bench():
    from script_modules import benchmark

    return benchmark("bench_default_run")


def test_the_default_run_benchmark_runs_tox_ini_s_commands_away_from_the_checkout(tmp_path):
    bench = _bench()
    commands = bench.default_commands()
    runs = [c for c in commands if c.startswith("pnnx-conformance run")]
    assert len(runs) == 1 and "--zoo" in runs[0] and commands[-1].startswith("pnnx-conformance report")
    for command in commands:
        argv = bench.localized(command, tmp_path, ["--max-cases", "3"])
        assert "{posargs}" not in argv and not any("build/conformance" in a for a in argv)
        assert "README.md" not in argv and "reports" not in argv  # the checkout's own stay untouched
    assert bench.localized(runs[0], tmp_path, ["--max-cases", "3"])[-2:] == ["--max-cases", "3"]
