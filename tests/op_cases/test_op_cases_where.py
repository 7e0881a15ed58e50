"""`pnnx-cases where OP` and the literal registration it relies on: every table row is
answered with its table line and a case family, each `file:line` points at the right text,
and a few rows name the exact files a newcomer would look for."""
from __future__ import annotations

import ast
import fnmatch
import json
import re
from pathlib import Path

import pytest

from pnnx_op_cases import registry, tables, where
from pnnx_op_cases.cli import main

FAMILIES = Path(registry.__file__).with_name("families")
ROWS = [r.op for r in tables.all_rows()]


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _text_at(location: str) -> list[str]:
    path, line = location.rsplit(":", 1)
    lines = (where.ROOT / path).read_text().splitlines()
    assert 1 <= int(line) <= len(lines), location
    return lines[int(line) - 1:]


# --- registration ---------------------------------------------------------------------------
def test_family_registrations_name_their_rows_literally():
    """`grep '"nn.Conv2d"' op_cases` finds every family: no f-string, loop or star keys."""
    bad = []
    for path in sorted(FAMILIES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "family":
                if node.keywords or not node.args or not all(
                        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args):
                    bad.append(f"{path.name}:{node.lineno}")
    assert not bad, bad


def test_registered_keys_and_table_rows_are_the_same_set():
    assert registry.registered_ops() == set(ROWS)
    assert {c.op for c in registry.all_cases()} == set(ROWS)


def test_a_family_naming_a_row_it_yields_nothing_for_is_an_error(monkeypatch):
    monkeypatch.setattr(registry, "_FAMILIES", {op: list(fns) for op, fns in registry._FAMILIES.items()})
    registry.family("nn.ReLU")(lambda: iter(()))
    registry.all_cases.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"registered for \['nn.ReLU'\] but yields no case"):
            registry.all_cases()
    finally:
        monkeypatch.undo()
        registry.all_cases.cache_clear()


# --- every row ---------------------------------------------------------------------------------
# every row's answer takes ~25 CPU-s: one worker makes it once for the tests that read it (loadgroup)
EVERY_ROW = pytest.mark.xdist_group("op_cases_where")


@pytest.fixture(scope="module")
def answers():
    return {op: where.pieces(op) for op in ROWS}


@EVERY_ROW
def test_every_row_has_its_table_line_and_a_case_family(answers):
    missing = [op for op, found in answers.items()
               if not any(p.group == "table" for p in found) or not any(p.group == "cases" for p in found)]
    assert not missing, missing[:10]


@EVERY_ROW
def test_table_and_family_locations_point_at_the_operator(answers):
    wrong = []
    for op, found in answers.items():
        for p in found:
            text = _text_at(p.where)
            if p.group == "table" and text[0].split("\t")[0] != op:
                wrong.append((op, p.where))
            if p.group == "cases":
                head = "\n".join(text[:12])  # the decorator, up to its def line
                head = head[:head.find("def ") if "def " in head else None]
                if f'"{op}"' not in head:
                    wrong.append((op, p.where))
    assert not wrong, wrong[:10]


@EVERY_ROW
def test_every_location_exists(answers):
    for found in answers.values():
        for p in found:
            _text_at(p.where)


@EVERY_ROW
def test_every_row_shows_a_place_for_every_door_but_the_listed_gaps(answers):
    """where_gaps.tsv says, per (operator pattern, door), why no place writes it; every other
    pair shows one, and a listed pair that gains a place must leave the list."""
    assert all(door in where.DOORS and reason for _, door, reason in where.gaps())
    missing, closed = [], []
    for op, found in answers.items():
        for door, places in where.doors_of(found).items():
            if not places and not where.gap_reason(op, door):
                missing.append((op, door))
            if places and where.gap_reason(op, door):
                closed.append((op, door, places[0].where))
    assert not missing, missing[:20]
    assert not closed, closed[:20]


def test_every_listed_gap_names_a_table_row():
    assert all(any(fnmatch.fnmatchcase(op, pattern) for op in ROWS) for pattern, _, _ in where.gaps())


def test_every_frontend_registry_names_its_doors_and_every_rule_shows_up():
    from pnnx_reference.registry import REGISTRIES

    where.known_ops()  # where imports every frontend, which fills REGISTRIES (whatever ran before on this worker)
    frontends = [reg for reg in REGISTRIES.values() if reg.doors]
    assert {d for reg in frontends for d in reg.doors} == {".pt", ".pt2", ".onnx"}
    produced = {op for reg in frontends for rule in reg.rules() for op in rule.traits.get("produces", ())}
    for op in sorted(produced & set(ROWS))[:40]:
        rules = [r.where for reg in frontends for r in reg.rules() if op in r.traits.get("produces", ())]
        shown = {p.where for p in where.pieces(op) if p.doors}
        assert set(rules) <= shown, (op, set(rules) - shown)


def test_where_imports_no_harness_and_reads_no_test_fixture():
    source = Path(where.__file__).read_text()
    assert not re.search(r"^\s*(from|import) pnnx_conformance", source, re.M)
    assert '"tests"' not in source and "tests/" not in source


# --- a few rows, by name -----------------------------------------------------------------------
def _files(op: str, group: str) -> list[str]:
    return [p.where.rsplit(":", 1)[0] for p in where.pieces(op) if p.group == group]


def test_conv2d_story():
    found = where.pieces("nn.Conv2d")
    assert _files("nn.Conv2d", "table") == ["op_cases/pnnx_op_cases/tables/nn.tsv"]
    assert set(_files("nn.Conv2d", "cases")) == {"op_cases/pnnx_op_cases/families/nn_conv.py",
                                                 "op_cases/pnnx_op_cases/families/batch_axes.py"}
    frontends = _files("nn.Conv2d", "frontends")
    assert {"reference/pnnx_reference/frontends/torchscript/stdmodules.py",
            "reference/pnnx_reference/frontends/export/modules.py",
            "reference/pnnx_reference/frontends/python/leaves.py",
            "reference/pnnx_reference/frontends/onnx/rules/conv.py"} <= set(frontends)
    doors = where.doors_of(found)
    assert [p.where.rsplit(":", 1)[0] for p in doors[".onnx"]] == ["reference/pnnx_reference/frontends/onnx/rules/conv.py"]
    assert "def conv(" in _text_at(doors[".onnx"][0].where)[1]
    emitters = [p.what.split(":")[0] for p in found if p.group == "emitters"]
    assert {"ncnn", "pnnx.onnx", "_pnnx.py"} <= set(emitters)
    files = _files("nn.Conv2d", "emitters")
    assert {"reference/pnnx_reference/emit/ncnn/families/conv.py",
            "reference/pnnx_reference/emit/onnx/families/conv.py"} <= set(files)
    assert any("fuse_batchnorm.py" in f for f in _files("nn.Conv2d", "passes"))
    tolerance = [p for p in found if p.group == "tolerances"]
    assert [p.where.rsplit(":", 1)[0] for p in tolerance] == ["reference/pnnx_reference/tolerances.py"]
    assert '"nn.Conv*"' in _text_at(tolerance[0].where)[0]


def test_functional_conv_names_its_aten_rule():
    aten = [p for p in where.pieces("F.conv2d") if p.group == "frontends" and "aten rule" in p.what]
    assert [p.what for p in aten] == ["aten rule _convolution, convolution", "aten rule _convolution_mode"]
    assert "def _convolution" in "\n".join(_text_at(aten[0].where)[:3])


def test_interpolate_names_the_upsample_rule_and_the_onnx_resize_rule():
    found = where.pieces("F.interpolate")
    aten = [p for p in found if p.group == "frontends" and "aten rule" in p.what]
    assert len(aten) == 1 and "upsample_nearest1d" in aten[0].what
    assert "def _upsample" in "\n".join(_text_at(aten[0].where)[:2])
    assert any("carry atol" in p.what for p in found if p.group == "tolerances")
    onnx = where.doors_of(found)[".onnx"]
    assert {p.where.rsplit(":", 1)[0] for p in onnx} == {"reference/pnnx_reference/frontends/onnx/rules/resize.py"}
    assert {p.what for p in onnx} >= {"onnx-frontend rule Resize writes it", "onnx-frontend rule Upsample writes it"}


def test_a_module_the_onnx_door_writes_as_its_function_shows_that_rule_with_a_note():
    """torch.onnx keeps no module: nn.AvgPool2d comes back as F.avg_pool2d (where.ONNX_SPELLINGS,
    measured by benchmarks/onnx_door_writes.py)."""
    onnx = where.doors_of(where.pieces("nn.AvgPool2d"))[".onnx"]
    assert [p.what for p in onnx] == ["onnx-frontend rule AveragePool writes it as F.avg_pool2d"]
    assert "def average_pool(" in "\n".join(_text_at(onnx[0].where)[:3])
    rc_text = where.render("nn.AvgPool2d", where.pieces("nn.AvgPool2d"))
    assert "(no place writes it through the .onnx door)" not in rc_text


def test_an_onnx_row_names_its_own_rule_and_only_the_onnx_door():
    doors = where.doors_of(where.pieces("onnx.Conv"))
    assert [p.what for p in doors[".onnx"]] == ["onnx-frontend rule Conv converts it"]
    assert not doors["python"] and not doors[".pt"] and not doors[".pt2"]


def test_einsum_matches_its_aten_rule_by_name():
    found = where.pieces("torch.einsum")
    frontends = [p.what.split(":")[0] for p in found if p.group == "frontends"]
    assert frontends == ["Python API", "aten rule einsum", "onnx-frontend rule Einsum writes it",
                         "params"]  # + its whitespace rule
    assert {"reference/pnnx_reference/emit/ncnn/families/matmul.py",
            "reference/pnnx_reference/emit/onnx/families/matmul.py"} <= set(_files("torch.einsum", "emitters"))
    assert _files("torch.einsum", "cases") == ["op_cases/pnnx_op_cases/families/torch_matmul.py"]


def test_an_op_without_an_aten_rule_names_the_generic_mapping():
    aten = [p for p in where.pieces("F.relu") if p.group == "frontends"]
    assert any("generic mapping" in p.what and "def _generic" in _text_at(p.where)[0] for p in aten)


def test_waivers_are_found_by_case_pattern(tmp_path):
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('# a comment\n\n[[waiver]]\ncase = "nn.ReLU/*"\nbackend = "ncnn-cpu"\nconverter = "*"\n'
                       'reason = "a reason"\nlink = "https://example.org"\n\n'
                       '[[waiver]]\ncase = "nn.Conv2d/k3*"\nbackend = "*"\nconverter = "upstream"\n'
                       'reason = "conv reason"\nlink = "https://example.org"\n')
    found = list(where._waivers("nn.Conv2d", waivers))
    assert [(p.where.rsplit(":", 1)[1], p.what.split(" [")[0]) for p in found] == [("10", "nn.Conv2d/k3*")]
    assert "conv reason" in found[0].what
    assert not list(where._waivers("nn.Conv1d", waivers))


# --- the command ----------------------------------------------------------------------------
def test_where_prints_every_group(capsys):
    rc, out, err = _run(capsys, "where", "torch.einsum")
    assert rc == 0 and not err
    lines = out.splitlines()
    assert lines[0] == "torch.einsum"
    assert [ln.strip() for ln in lines if not ln.startswith("    ")][1:] == list(where.GROUPS)
    assert re.search(r"^    op_cases/pnnx_op_cases/tables/torch\.tsv:\d+ ", out, re.M)


def test_where_json(capsys):
    rc, out, _ = _run(capsys, "where", "nn.Conv2d", "--json")
    data = json.loads(out)
    assert rc == 0 and data["op"] == "nn.Conv2d"
    assert {p["group"] for p in data["pieces"]} >= {"table", "cases", "frontends", "emitters"}
    assert all(re.fullmatch(r"\S+:\d+", p["where"]) for p in data["pieces"])


def test_where_unknown_operator_is_one_line_with_close_matches(capsys):
    rc, out, err = _run(capsys, "where", "nn.Conv2")
    assert rc == 2 and not out
    assert err.count("\n") == 1 and err.startswith("error: unknown operator 'nn.Conv2'")
    assert "nn.Conv2d" in err


def test_where_accepts_an_emitted_operator_that_is_no_table_row(capsys):
    rc, out, _ = _run(capsys, "where", "pnnx.Expression")
    assert rc == 0 and "  table\n    (none)" in out


@EVERY_ROW
def test_a_door_without_a_place_shows_why(answers):
    op = "nn.Dropout"   # an inference export holds no dropout: a gap of the .onnx door
    reason = where.gap_reason(op, ".onnx")
    assert reason and f"through the .onnx door: {reason})" in where.render(op, answers[op])
    assert where.as_json(op, answers[op])["gaps"] == {".onnx": reason}
