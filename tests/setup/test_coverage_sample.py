"""The op-case sweeps measure coverage on a sample of their cases (tests/common/coverage_sample.py):
every sweep carries the mark, and the sample keeps the first case of each operator and variant."""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import coverage_sample

ROOT = Path(__file__).resolve().parents[2]
SWEEPS = ("tests/op_cases/test_op_cases_eager.py", "tests/frontends/export/test_export_agreement.py",
          "tests/frontends/torchscript/test_ts_agreement.py", "tests/emit/onnx/test_onnx_export_cases.py",
          "tests/emit/python/test_pycodegen_cases.py", "tests/emit/ncnn/test_ncnn_export_op_cases.py",
          "tests/frontends/onnx/test_onnx_cases.py")


@pytest.mark.parametrize("path", SWEEPS)
def test_every_sweep_carries_the_mark(path):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    marks = [ast.unparse(n.value) for n in tree.body if isinstance(n, ast.Assign)
             and any(ast.unparse(t) == "pytestmark" for t in n.targets)]
    assert any(coverage_sample.MARK in m for m in marks), f"{path} has no pytestmark with {coverage_sample.MARK}"


class _Item:
    def __init__(self, nodeid, params, marked=True):
        self.nodeid, self.name, self.originalname = nodeid, nodeid.split("::")[1], nodeid.split("::")[1].split("[")[0]
        self.callspec = SimpleNamespace(params=params, id=nodeid.split("[", 1)[1][:-1])
        self.marks = [coverage_sample.MARK] if marked else []

    def get_closest_marker(self, name):
        return name if name in self.marks else None



def test_first_case_of_each_operator_and_variant_is_measured(monkeypatch):
    monkeypatch.delenv("PNNX_COVER_EVERY_CASE", raising=False)
    ids = ["nn.Conv2d/a", "nn.Conv2d/b", "nn.Conv2d/a-batch4", "nn.Conv2d/b-batch4", "F.relu/a"]
    items = [_Item(f"tests/t.py::test_x[{i}]", {"case_id": i}) for i in ids]
    items.append(_Item("tests/t.py::test_y[nn.Conv2d/b]", {"case": SimpleNamespace(op="nn.Conv2d")}))
    items.append(_Item("tests/u.py::test_x[nn.Conv2d/b]", {"case_id": "nn.Conv2d/b"}, marked=False))
    assert coverage_sample.sample(items) == 2
    paused = [i.nodeid for i in items if getattr(i, coverage_sample.UNMEASURED, False)]
    assert paused == ["tests/t.py::test_x[nn.Conv2d/b]", "tests/t.py::test_x[nn.Conv2d/b-batch4]"]


def test_every_case_is_measured_on_request(monkeypatch):
    monkeypatch.setenv("PNNX_COVER_EVERY_CASE", "1")
    items = [_Item(f"tests/t.py::test_x[nn.Conv2d/{c}]", {"case_id": f"nn.Conv2d/{c}"}) for c in "abc"]
    assert coverage_sample.sample(items) == 0


def test_a_flagged_item_runs_with_no_tracer_and_the_tracer_comes_back():
    """Under `--cov` (`tox -e coverage`; and under pytest-xdist, where pytest-cov's no_cover mark leaves a tracer
    running) nothing traces a flagged item; without coverage there is nothing to pause."""
    before = sys.gettrace()
    flagged = _Item("tests/t.py::test_x[nn.Conv2d/b]", {"case_id": "nn.Conv2d/b"})
    setattr(flagged, coverage_sample.UNMEASURED, True)
    with coverage_sample.paused(flagged):
        inside = sys.gettrace()
    assert inside is None
    assert (sys.gettrace() is None) == (before is None)  # coverage may resume with another tracer object
    with coverage_sample.paused(_Item("tests/t.py::test_x[nn.Conv2d/a]", {"case_id": "nn.Conv2d/a"})):
        assert sys.gettrace() is before
