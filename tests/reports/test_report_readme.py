"""The README's compact support table (issue 15): a row per operator, a cell per converter
route summing up all its checks and backends, short codes for what does not pass."""
from __future__ import annotations

import pytest

from pnnx_conformance.report.readme import readme_section, route_cell, routes, support_table, totals_table
from pnnx_conformance.report.summary import summarize
from pnnx_conformance.results import Result
from pnnx_op_cases.tables import all_rows

MODES = (("torch", "fp32"), ("ncnn-cpu", "default"), ("ncnn-cpu", "fp32"), ("ncnn-vulkan", "fp16"),
         ("ncnn-vulkan", "fp32"))


def rec(case, status, check="parity", backend=None, precision=None, converter="reference"):
    op = case.split("/")[0]
    table = "torch" if op.startswith("torch.") else op.split(".")[0]
    return Result(case=case, op=op, table=table, converter=converter, check=check, status=status,
                  backend=backend, precision=precision)


def run(case, converter="reference", fails=(), statuses=None):
    """Every check and mode of one case; `fails`: (backend, precision) or check names that fail."""
    statuses = statuses or {}
    out = [rec(case, statuses.get("convert", "pass"), "convert", converter=converter)]
    for check in ("format", "roundtrip"):
        out.append(rec(case, "fail-format" if check in fails else statuses.get(check, "pass"), check,
                       converter=converter))
    for backend, precision in MODES:
        bad = (backend, precision) in fails or backend in fails
        status = "fail-runtime" if bad else statuses.get((backend, precision), "pass")
        out.append(rec(case, status, "parity", backend, precision, converter))
    return out


def cell(results, op, converter="reference"):
    s = summarize(results)
    return route_cell(s, op, [c for c in s.columns if c.converter == converter])


@pytest.mark.parametrize("fails, expected", [
    ((), "✅"),
    (("ncnn-cpu", "ncnn-vulkan"), "❌ nc,nv"),            # a backend's code alone: all its modes
    ((("ncnn-vulkan", "fp16"),), "❌ nv16"),              # one mode: the code with its suffix
    ((("ncnn-cpu", "default"), ("ncnn-vulkan", "fp32")), "❌ ncd,nv32"),
    (("format", ("torch", "fp32")), "❌ fm,th"),          # torch has one mode: no suffix
])
def test_a_cell_names_what_fails(fails, expected):
    assert cell(run("nn.ReLU/a", fails=fails), "nn.ReLU") == expected


def test_partial_waived_skipped_and_not_run_cells():
    partial = run("nn.Conv2d/a") + run("nn.Conv2d/b", fails=("ncnn-vulkan",))
    assert cell(partial, "nn.Conv2d") == "🟡 nv"                # every failing column passes a case
    mixed = partial + run("nn.Conv2d/c", fails=("ncnn-vulkan", "format"))
    assert cell(mixed, "nn.Conv2d") == "🟡 fm,nv"
    worst = run("nn.Conv2d/a", fails=("format",)) + run("nn.Conv2d/b", fails=("format", "ncnn-cpu"))
    assert cell(worst, "nn.Conv2d") == "❌ fm,nc"                # format passes none
    waived = run("F.relu/x", statuses={("ncnn-vulkan", "fp16"): "xfail", ("ncnn-cpu", "fp32"): "skipped"})
    assert cell(waived, "F.relu") == "⚪ nc32,nv16"
    assert cell(waived, "nn.ReLU") == "·"
    assert cell(waived, "F.relu", converter="upstream") == "·"


def test_any_number_of_routes_reference_first_upstream_last():
    results = [r for conv in ("upstream", "acme", "reference-onnx", "reference", "reference-pt",
                              "reference-export", "reference-zeta")
               for r in run("nn.ReLU/a", converter=conv, fails=("ncnn-cpu",) if conv == "acme" else ())]
    s = summarize(results)
    order = ["reference", "reference-pt", "reference-export", "reference-onnx", "reference-zeta", "acme", "upstream"]
    assert routes(s) == order
    table = support_table(s).splitlines()
    assert table[0] == "operator|upstream claims|" + "|".join(order)
    # a later route's cell equal to the first route's is "="
    assert "nn.ReLU|pn|✅|=|=|=|=|❌ nc|=" in table
    # the full matrix's columns follow the same order
    assert [c.converter for c in s.columns][::len(s.columns) // len(order)] == order
    totals = totals_table(s).splitlines()
    assert totals[0] == "| check / backend | code | " + " | ".join(order) + " |"
    assert "| ncnn-cpu fp32 | nc32 | 1/1 | 1/1 | 1/1 | 1/1 | 1/1 | 0/1 | 1/1 |" in totals


def test_every_table_row_and_every_network_has_a_row():
    results = run("nn.ReLU/a") + run("models.resnet18/x") + run("torch.cat/x", fails=("ncnn-cpu",))
    for r in results:
        if r.op.startswith("models."):
            r.table = "models"
    lines = readme_section(summarize(results)).splitlines()
    rows = {line.split("|")[0] for line in lines if line.count("|") == 2 and not line.startswith("|")}
    # every PyTorch-level row; the ONNX operators' rows are in support_matrix.md, not the README
    assert {r.op for r in all_rows() if r.table != "onnx"} <= {name.split(" ")[0] for name in rows}
    assert not any(name.startswith("onnx.") for name in rows)
    assert "models.resnet18|" + "|✅" in lines
    assert "nn.Bilinear||·" in lines                               # never ran: present, marked not run
    assert any(line.startswith("torch.cat ⚠️|pn|❌ nc") for line in lines)  # upstream claims it: flagged


def test_a_route_like_the_first_is_written_as_equal_and_a_differing_one_in_full():
    results = (run("nn.ReLU/a", fails=("ncnn-cpu",)) + run("nn.ReLU/a", converter="reference-pt", fails=("ncnn-cpu",))
               + run("nn.ReLU/a", converter="upstream") + run("F.relu/x", converter="upstream"))
    table = support_table(summarize(results)).splitlines()
    assert "nn.ReLU ⚠️|pn|❌ nc|=|✅" in table
    assert "F.relu|pn|·|·|✅" in table        # "=" never stands for "not run"


def test_a_route_that_converts_no_case_of_a_row_says_only_cv():
    fails = ("format", "roundtrip") + MODES
    results = run("nn.ReLU/a") + run("nn.ReLU/a", converter="reference-onnx", fails=fails,
                                     statuses={"convert": "fail-convert"})
    table = support_table(summarize(results)).splitlines()
    assert "nn.ReLU|pn|✅|❌ cv" in table
