"""The zoo runner: case selection, the plan of units, zoo options reaching both converters,
the table, and one model end to end through the harness workers."""
from __future__ import annotations

import json
import warnings

import pytest

from pnnx_conformance.results import Metrics, Result, read_results
from pnnx_model_zoo import run
from pnnx_model_zoo.converters import ZooReference, ZooUpstream, module_qualname, upstream_args
from pnnx_model_zoo.zoo import zoo_cases
from pnnx_reference.errors import UsageError

CASES = {c.op.removeprefix("models."): c for c in zoo_cases()}


def test_select_takes_bare_names_and_patterns():
    assert [c.id for c in run.select("resnet18")] == ["models.resnet18/random_init"]
    assert {c.op for c in run.select("lstm_seq,models.gru*")} == {"models.lstm_seq", "models.gru_seq"}
    assert len(run.select(None)) == len(zoo_cases())


def test_select_rejects_an_unknown_model_with_one_clear_error():
    with pytest.raises(UsageError, match="no zoo model matches 'resnet19'.*resnet18"):
        run.select("resnet19")


def test_main_reports_an_unknown_model_as_one_line(capsys):
    assert run.main(["--models", "nosuchnet", "--out", "/nonexistent/never-written"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no zoo model matches")


def test_plan_checks_every_backend_for_every_converter():
    units = run.plan([CASES["resnet18"]])
    ours = [u for u in units if u.converter == run.CONVERTERS["reference"]]
    pt = [u for u in units if u.converter == run.CONVERTERS["reference-pt"]]
    theirs = [u for u in units if u.converter == run.CONVERTERS["upstream"]]
    assert [u.check for u in ours] == ["convert"] + ["parity"] * len(run.MODES)
    assert [(u.backend, u.precision) for u in ours if u.backend] == list(run.MODES)
    assert [(u.check, u.backend, u.precision) for u in pt] == \
        [("convert", None, None)] + [("parity", *m) for m in run.PT_MODES]
    assert [u.check for u in theirs] == ["convert"] + ["parity"] * len(run.UPSTREAM_MODES)
    assert [(u.backend, u.precision) for u in theirs if u.backend] == list(run.UPSTREAM_MODES)
    assert set(run.UPSTREAM_MODES) == set(run.MODES) - {("torch", "fp32")}
    assert {("ncnn-cpu", "default"), ("ncnn-vulkan", "fp16")} <= set(run.MODES)
    assert not any(u.converter == run.CONVERTERS["upstream"] for u in run.plan([CASES["resnet18"]], upstream=False))


def test_records_use_the_report_names_of_converters_and_backends():
    r = run.short_names(Result("c", "models.x", "models", run.CONVERTERS["upstream"], "parity", "pass",
                               "ncnn-vulkan", "fp32"))
    assert (r.converter, r.backend) == ("upstream", "ncnn-vulkan")


def test_table_shows_status_and_max_abs_error():
    results = [Result("models.a/x", "models.a", "models", "reference", "convert", "pass"),
               Result("models.a/x", "models.a", "models", "reference", "parity", "fail-numeric", "ncnn-cpu", "fp32",
                      Metrics(max_abs=0.25))]
    text = run.table(results)
    row = text.splitlines()[1]
    assert row.startswith("models.a/x") and "fail-numeric 2.5e-01" in row and row.split()[1] == "pass"
    assert len(run.failures(results)) == 1


def test_table_shows_the_relative_l2_error_of_network_level_checks():
    results = [Result("models.a/x", "models.a", "models", "reference", "parity", "pass", "ncnn-vulkan", "fp16",
                      Metrics(max_abs=0.5, rel_l2=0.004))]
    row = run.table(results).splitlines()[1]
    assert "pass L2 4.0e-03" in row and "5.0e-01" not in row


def test_upstream_gets_moduleop_as_the_torchscript_class_path():
    case = CASES["yolov5_focus"]
    model = case.make_model()
    path = module_qualname(model, "Focus")
    assert path.endswith(".Focus") and path != "Focus"
    assert upstream_args(case, model) == [f"moduleop={path}"]
    assert upstream_args(CASES["resnet18"], model) == []


@pytest.mark.upstream
def test_both_converters_keep_focus_whole(tmp_path):
    """The zoo's options reach both converters: one Focus operator in each pnnx.param."""
    case = CASES["yolov5_focus"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ZooUpstream().convert(case, tmp_path / "up")
    lines = theirs.paths["pnnx.param"].read_text().splitlines()[2:]
    assert sum(line.split()[0].endswith(".Focus") for line in lines) == 1
    ours = ZooReference().convert(case, tmp_path / "ours")
    lines = ours.paths["pnnx.param"].read_text().splitlines()[2:]
    assert sum(line.split()[0].endswith(".Focus") for line in lines) == 1


@pytest.mark.slow
def test_run_writes_records_for_one_model(tmp_path, capsys):
    assert run.main(["--models", "gru_seq", "--no-upstream", "--no-onnx", "--out", str(tmp_path), "--strict"]) == 0
    records = list(read_results(tmp_path / run.RESULTS))
    for converter, modes in (("reference", run.MODES), ("reference-pt", run.PT_MODES),
                             ("reference-export", run.MODES)):
        mine = [r for r in records if r.converter == converter]
        assert {(r.check, r.backend, r.precision) for r in mine} == \
            {("convert", None, None)} | {("parity", *mode) for mode in modes}
    assert all(r.table == "models" and r.status == "pass" for r in records), \
        [(r.converter, r.backend, r.status, r.error) for r in records if r.status != "pass"]
    assert all(json.loads(r.to_json())["case"] == "models.gru_seq/h48_l2" for r in records)
    assert "models.gru_seq/h48_l2" in capsys.readouterr().out


def test_whole_network_bounds_apply_to_zoo_models_only_where_the_table_says():
    from pnnx_conformance.tolerances import tolerance_for

    case = CASES["resnet18"]
    # fp32 weights, fp16 options off: whole networks meet the per-operator ncnn-cpu bound
    assert tolerance_for(case, "ncnn-cpu", "fp32") == tolerance_for(CASES["lstm_seq"], "ncnn-cpu", "fp32")
    assert tolerance_for(case, "ncnn-cpu", "fp32").atol == 1e-4
    assert tolerance_for(case, "pnnx-python", "fp32").atol == 1e-5
    assert tolerance_for(case, "onnxruntime", "fp32").atol == 1e-4
    assert tolerance_for(case, "torch", "fp32").exact
    # fp16 modes: one relative L2 bound per output instead of per-element bounds
    for backend, precision in (("ncnn-cpu", "default"), ("ncnn-vulkan", "fp16")):
        assert tolerance_for(case, backend, precision).max_rel_l2 is not None
    assert tolerance_for(case, "ncnn-cpu", "fp32").max_rel_l2 is None


@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_a_case_artefacts_go_when_its_last_unit_reports(tmp_path, keep):
    """A whole sweep would hold every network's artefacts (GBs each) until the run ends."""
    cases = [CASES["resnet18"], CASES["lstm_seq"]]
    zoo = run.ZooRun(cases, tmp_path / "out", upstream=False, onnx=False, keep_artefacts=keep)
    units = zoo.stream.units
    for case in cases:
        zoo.folders[case.id].mkdir(parents=True)
    first = [u for u in units if u.case == cases[0].id]
    for unit in first:
        assert zoo.folders[cases[0].id].is_dir()
        zoo.collect(Result(unit.case, cases[0].op, "models", unit.converter, unit.check, "pass", unit.backend,
                           unit.precision))
    assert zoo.folders[cases[0].id].is_dir() == keep and zoo.folders[cases[1].id].is_dir()
    zoo.finish()


def test_a_network_missing_the_fp32_bound_by_its_own_rounding_passes_pnnx_python(tmp_path, monkeypatch):
    """The self-check's fp64 second look in the harness: with the whole-network bound set to 0,
    YOLOv5's folded conv+bn layers miss it by rounding alone and pass within the factor of their
    own fp32 rounding, saying so; with the factor 0 they fail."""
    from pnnx_conformance import cases, checks
    from pnnx_conformance.checks import Executor
    from pnnx_conformance.units import Unit
    from pnnx_reference import tolerances

    zero = tolerances.Tolerance(0.0, 0.0, "test: no rounding allowed", accum=0.0)
    monkeypatch.setitem(tolerances.OP_OVERRIDES, ("models.*", "pnnx-python", "fp32"), zero)
    unit = Unit("models.yolov5_focus/moduleop", "reference", "parity", "pnnx-python", "fp32")
    cases.use_provider("pnnx_model_zoo.zoo:all_cases")
    try:
        passed = Executor(tmp_path / "a", tier="full").execute(unit)
        monkeypatch.setattr(checks, "SELF_CHECK_ROUNDING_FACTOR", 0.0)
        monkeypatch.setattr("pnnx_reference.selfcheck.SELF_CHECK_ROUNDING_FACTOR", 0.0)
        failed = Executor(tmp_path / "b", tier="full").execute(unit)
    finally:
        cases.use_provider(None)
    assert passed.status == "pass" and "network's own fp32 rounding" in passed.detail, passed
    assert failed.status == "fail-numeric", failed
