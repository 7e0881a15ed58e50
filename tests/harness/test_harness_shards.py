"""Balanced shards (shards.py), the plan command, merging shards back into one run, and
certifying merged results: the merged shards equal one machine's run record for record."""
from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest

from pnnx_conformance import cli
from pnnx_conformance.cases import select_cases
from pnnx_conformance.errors import HarnessError
from pnnx_conformance.merge import VOLATILE, comparable, merge_folder
from pnnx_conformance.certify import certify, verify_file
from pnnx_op_cases.batch_variants import base_id
from pnnx_conformance.results import Result, read_results, write_results
from pnnx_conformance.runinfo import run_info, write_run_info
from pnnx_conformance.runner import RunOptions, parse_shard, run
from pnnx_conformance.shards import (COSTS_FILE, CostModel, learn, plan_digest, plan_shards, read_costs,
                                     shard_of, write_costs)
from pnnx_op_cases.case import Case, InputSpec


def _case(case_id: str, table: str = "nn") -> Case:
    return Case(case_id, case_id.split("/")[0], "", (InputSpec((1,)),))


UNIVERSE = [_case(f"nn.Op{i}/v{j}") for i in range(4) for j in range(5)] + [_case("F.x/a", "F")]


def _record(case, converter="reference", time_s=1.0, check="convert", backend=None):
    return Result(case=case, op=case.split("/")[0], table="nn", converter=converter, check=check, status="pass",
                  backend=backend, precision="fp32" if backend else None, time_s=time_s)


# --- costs -----------------------------------------------------------------------------
def test_costs_are_learnt_from_records_and_written_one_line_per_case(tmp_path):
    records = [_record("nn.Op0/v0", time_s=0.5), _record("nn.Op0/v0", time_s=0.25, check="parity", backend="torch"),
               _record("nn.Op1/v0", "upstream", 2.0), _record("gone/v0", time_s=9.0)]
    costs = learn({"reference": {"nn.Op1/v1": 3.0, "nn.Op0/v0": 7.0}}, records, {c.id for c in UNIVERSE})
    assert costs == {"reference": {"nn.Op0/v0": 0.75, "nn.Op1/v1": 3.0}, "upstream": {"nn.Op1/v0": 2.0}}
    path = write_costs(tmp_path / "costs.json", costs)
    assert read_costs(path) == costs
    lines = path.read_text().splitlines()
    assert ' "nn.Op0/v0": [0.75, null],' in lines and json.loads(path.read_text())["converters"] == \
        ["reference", "upstream"]
    with pytest.raises(HarnessError, match="absent.json: unreadable case costs"):
        read_costs(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text('{"format": 1, "converters": ["a"], "cases": {"x/1": [1, 2]}}')
    with pytest.raises(HarnessError, match="bad.json: unreadable case costs"):
        read_costs(tmp_path / "bad.json")


def test_unmeasured_cases_cost_the_median_of_their_operator_then_table_then_all():
    costs = {"reference": {"nn.Op0/v0": 1.0, "nn.Op0/v1": 3.0, "nn.Op0/v2": 8.0, "nn.Op1/v0": 10.0}}
    model = CostModel(costs, UNIVERSE)
    by_id = {c.id: c for c in UNIVERSE}
    assert model.estimate(by_id["nn.Op0/v0"], "reference") == 1000          # measured
    assert model.estimate(by_id["nn.Op0/v4"], "reference") == 3000          # its operator's median
    assert model.estimate(by_id["nn.Op2/v0"], "reference") == 5500          # its table's
    assert model.estimate(by_id["F.x/a"], "reference") == 5500              # every measured case's
    assert model.estimate(by_id["nn.Op0/v0"], "plugin") == 1000             # as the measured converters
    assert CostModel({}, UNIVERSE).estimate(by_id["F.x/a"], "reference") == 1000  # nothing known: all alike
    assert not model.measured(by_id["nn.Op0/v4"], "reference") and model.measured(by_id["nn.Op0/v0"], "reference")


# --- the plan --------------------------------------------------------------------------
def test_the_plan_partitions_the_cases_the_same_way_whatever_their_order():
    rng = random.Random(7)
    costs = {"reference": {c.id: rng.uniform(0.1, 5) for c in UNIVERSE[::2]}}
    model = CostModel(costs, UNIVERSE)
    plan = plan_shards(UNIVERSE, 4, ["reference"], model)
    ids = [c.id for s in plan for c in s.cases]
    assert sorted(ids) == sorted(c.id for c in UNIVERSE) and len(ids) == len(set(ids))
    shuffled = UNIVERSE[:]
    rng.shuffle(shuffled)
    again = plan_shards(shuffled, 4, ["reference"], CostModel(costs, list(reversed(UNIVERSE))))
    assert [[c.id for c in s.cases] for s in again] == [[c.id for c in s.cases] for s in plan]
    assert plan_digest(again) == plan_digest(plan)
    assert sum(s.predicted_ms for s in plan) == sum(model.case_ms(c, ["reference"]) for c in UNIVERSE)
    assert sum(s.estimated for s in plan) == len(UNIVERSE) - len(costs["reference"])


def test_shards_are_balanced_by_cost_not_by_count():
    costs = {"reference": {c.id: (20.0 if c.id.startswith("nn.Op0/") else 1.0) for c in UNIVERSE}}
    plan = plan_shards(UNIVERSE, 2, ["reference"], CostModel(costs, UNIVERSE))
    assert [s.predicted_s for s in plan] == [60.0, 56.0]        # five 20 s cases: one shard takes three
    assert [len(s.cases) for s in plan] == [3, 18]


@pytest.mark.parametrize("converters", [["reference"], ["reference", "upstream"]])
@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_the_committed_costs_give_shards_within_1_2_times_the_mean(n, converters):
    """Issue 18 item 6, on the committed cost file and today's full tier. A case is not split
    across shards, so no plan beats the costliest case: upstream's ncnn file of
    nn.ZeroPad2d/crop hangs ncnn until the 120 s time-out, more than 1.2 times the mean of 16
    shards of the reference and upstream routes."""
    assert COSTS_FILE.is_file()
    cases = select_cases("full")
    model = CostModel(read_costs(COSTS_FILE), cases)
    plan = plan_shards(cases, n, converters, model)
    mean = sum(s.predicted_ms for s in plan) / n
    costliest = max(model.case_ms(c, converters) for c in cases)
    assert max(s.predicted_ms for s in plan) <= max(1.2 * mean, costliest)


def test_the_committed_costs_measure_every_full_tier_case_through_the_reference_converter():
    measured = read_costs(COSTS_FILE)["reference"]
    missing = [c.id for c in select_cases("full") if c.id not in measured and base_id(c.id) not in measured]
    assert len(missing) <= len(select_cases("full")) // 4, \
        f"{len(missing)} cases unmeasured, e.g. {missing[:3]}: refresh with plan --learn"


def test_shard_of_records_the_plan_in_run_json_terms(tmp_path):
    cases = select_cases("full", ["F.relu", "F.dropout"])
    got = [shard_of(cases, (k, 3), ["reference"]) for k in (1, 2, 3)]
    assert sorted(c.id for mine, _ in got for c in mine) == sorted(c.id for c in cases)
    assert len({info["plan"] for _, info in got}) == 1 and all(info["planned_cases"] == len(cases) for _, info in got)
    assert parse_shard("2/3") == (2, 3)
    with pytest.raises(HarnessError):
        parse_shard("3/2")


# --- merging ---------------------------------------------------------------------------
def _shard_folder(path, k, n, plan="p1", case=None):
    write_results(path / "results.jsonl", [_record(case or f"nn.Op{k}/v0")])
    write_run_info(path, run_info("conformance", "full", ["reference"], 1, 2, 10.0 * k, commit="c",
                                  shard=f"{k}/{n}", plan=plan, planned_cases=n, predicted_worker_s=1.0,
                                  worker_s=2.0))


def test_merge_refuses_a_missing_shard_or_shards_of_another_plan(tmp_path):
    for k in (1, 2, 3):
        _shard_folder(tmp_path / "a" / f"s{k}", k, 3)
    assert len(merge_folder([tmp_path / "a"], tmp_path / "m")) == 3
    info = json.loads((tmp_path / "m" / "run.json").read_text())
    assert (info["cases"], info["shards"], info["wall_s"], info["plan"], info["worker_s"]) == (3, 3, 30.0, "p1", 6.0)
    with pytest.raises(HarnessError, match=r"incomplete merge: shard\(s\) 2/3 missing"):
        merge_folder([tmp_path / "a" / "s1", tmp_path / "a" / "s3"], tmp_path / "m2")
    _shard_folder(tmp_path / "b" / "s2", 2, 3, plan="p2", case="nn.Op2/v1")
    with pytest.raises(HarnessError, match="different plans"):
        merge_folder([tmp_path / "a" / "s1", tmp_path / "b" / "s2", tmp_path / "a" / "s3"], tmp_path / "m3")
    assert cli.main(["merge", str(tmp_path / "a" / "s1"), "--out", str(tmp_path / "m4")]) == 2


# --- one machine versus shards ---------------------------------------------------------
OPS = ["F.relu", "F.dropout"]
BACKENDS = ["torch", "pnnx-python"]
SHARDS = 3


def _opts(out, shard=(1, 1)):
    return RunOptions(out=out, tier="full", ops=OPS, backends=BACKENDS, converters=["reference"], shard=shard,
                      jobs=1, progress=False)


# the tests of this fixture run in one worker (tox.ini's `--dist loadgroup`): its runs happen once per session
ONE_RUN = pytest.mark.xdist_group("harness_shards")


@pytest.fixture(scope="module")
def single_and_sharded(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    assert run(_opts(root / "single")).errors == []
    for k in range(1, SHARDS + 1):
        assert run(_opts(root / "shards" / f"shard-{k}", (k, SHARDS))).errors == []
    assert cli.main(["merge", *(str(root / "shards" / f"shard-{k}") for k in range(1, SHARDS + 1)),
                     "--out", str(root / "merged")]) == 0
    return root


def _records(folder):
    return [comparable(r) for r in read_results(folder / "results.jsonl")]


@ONE_RUN
def test_merged_shards_equal_one_machine_record_for_record(single_and_sharded):
    """Only VOLATILE fields (time_s) may differ; every shard ran some of the cases."""
    root = single_and_sharded
    single, merged = _records(root / "single"), _records(root / "merged")
    assert VOLATILE == ("time_s",)
    assert merged == single and len(single) == len(select_cases("full", OPS)) * (4 + len(BACKENDS))
    assert {"pass", "skipped"} <= {r["status"] for r in single}
    assert all(list(read_results(root / "shards" / f"shard-{k}" / "results.jsonl")) for k in range(1, SHARDS + 1))


@ONE_RUN
def test_merged_summary_run_record_and_junit_match_the_single_run(single_and_sharded):
    root = single_and_sharded
    one, many = (json.loads((root / f / "summary.json").read_text()) for f in ("single", "merged"))
    timeless = lambda s: {k: v for k, v in s.items() if k not in ("wall_s", "shard", "shards", "by_check")}  # noqa: E731
    assert timeless(many) == timeless(one) and many["shards"] == SHARDS
    assert {k: v["statuses"] for k, v in many["by_check"].items()} == \
        {k: v["statuses"] for k, v in one["by_check"].items()}
    info_one, info_many = (json.loads((root / f / "run.json").read_text()) for f in ("single", "merged"))
    assert (info_many["cases"], info_many["tier"], info_many["converters"], info_many["shards"]) == \
        (info_one["cases"], "full", ["reference"], SHARDS)
    shard_infos = [json.loads((root / "shards" / f"shard-{k}" / "run.json").read_text()) for k in range(1, 4)]
    assert info_many["wall_s"] == max(i["wall_s"] for i in shard_infos)
    assert {i["plan"] for i in shard_infos} == {info_many["plan"]}

    def testcases(folder):
        return sorted((c.get("classname"), c.get("name"), tuple(x.tag for x in c))
                      for c in ET.parse(root / folder / "junit.xml").getroot().iter("testcase"))
    assert testcases("merged") == testcases("single")
    env_one, env_many = (json.loads((root / f / "environment.json").read_text()) for f in ("single", "merged"))
    assert env_many == env_one


@ONE_RUN
def test_certify_issues_the_same_certificate_from_merged_shards_as_from_one_run(single_and_sharded, tmp_path):
    root = single_and_sharded
    certs = [certify("torch", tmp_path / f, tier="full", ops=OPS, results=root / f)[0] for f in ("single", "merged")]
    same = lambda c: {k: v for k, v in c.items() if k not in ("created", "digest")}  # noqa: E731
    fp32 = certs[1]["summary"]["fp32"]
    assert same(certs[0]) == same(certs[1]) and fp32["total"] + fp32["not_applicable"] == len(select_cases("full", OPS))
    assert verify_file(tmp_path / "merged" / "certificate-torch.json", allow_unsigned=True) == []
    with pytest.raises(HarnessError, match="no onnxruntime parity record for"):
        certify("onnxruntime", tmp_path / "x", tier="full", ops=OPS, results=root / "merged")
    with pytest.raises(HarnessError, match="records of the full tier, not smoke"):
        certify("torch", tmp_path / "x", tier="smoke", ops=["F.relu"], results=root / "merged")


# --- the plan command ------------------------------------------------------------------
@ONE_RUN
def test_plan_prints_every_shard_and_learns_costs(single_and_sharded, tmp_path, capsys):
    costs = tmp_path / "costs.json"
    assert cli.main(["plan", "--shards", "3", "--tier", "full", "--op", ",".join(OPS), "--converter", "reference",
                     "--costs", str(costs), "--learn", str(single_and_sharded / "merged")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"3 shard(s) of {len(select_cases('full', OPS))} full-tier case(s) through reference")
    assert [line.split()[0] for line in out[2:5]] == ["1/3", "2/3", "3/3"]
    assert "x the mean" in out[-1]
    learnt = read_costs(costs)["reference"]
    assert sorted(learnt) == sorted(c.id for c in select_cases("full", OPS))
    assert cli.main(["plan", "--shards", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: --shards 0: need at least 1"


def test_a_run_hands_out_its_costliest_cases_first(tmp_path):
    from pnnx_conformance.cases import all_cases, use_provider
    from pnnx_conformance.shards import costly_first

    use_provider("harness_cases:cases")
    try:
        cases = all_cases()
        ids = [c.id for c in cases]
        costs = write_costs(tmp_path / "costs.json", {"reference": {ids[0]: 0.5, ids[1]: 3.0, ids[2]: 3.0}})
        order = [c.id for c in costly_first(cases, ["reference"], costs)]
        # measured ones by cost (ties by id), the unmeasured at the median of their operator, table or all
        assert order[:2] == sorted(ids[1:3]) and set(order) == set(ids)
        assert [c.id for c in costly_first(cases, ["reference"], costs)] == order  # the same every time
    finally:
        use_provider(None)
