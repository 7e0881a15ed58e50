"""What a conversion holds in memory (issue 32, peak memory): the traced values are spilled to a
temporary file as recorded (frontends/python/spilled.py) and read back exactly; the tracer keeps
no activation alive; a model given up by its caller (the command line) is freed once captured;
the self-check's forward frees each local after its last read. None of it changes what is
written, nor what the self-check finds on a mismatch."""
from __future__ import annotations

import ast
import gc
import weakref

import pytest
import torch
import torch.nn as nn

from pnnx_reference import api, expression, selfcheck
from pnnx_reference.errors import ConversionError
from pnnx_reference.frontends.python import trace
from pnnx_reference.frontends.python.spilled import SMALL, SpilledValues


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        z = torch.sigmoid(y) + 1          # the only `add` of the graph: pnnx.Expression
        return z.flatten(1).tanh()


def _x():
    torch.manual_seed(0)
    return torch.rand(1, 3, 32, 32)  # every activation past SMALL: all of them are spilled


@pytest.mark.parametrize("value", [
    torch.arange(5000, dtype=torch.float32).reshape(50, 100),
    torch.arange(5000, dtype=torch.float32).reshape(50, 100).t(),       # not contiguous
    torch.arange(3000, dtype=torch.int64),
    torch.arange(8000) % 3 == 0,                                          # bool
    torch.randn(1000, dtype=torch.complex64).conj(),                      # a conjugate view
    torch.randn(4000).to(torch.bfloat16),
    torch.randn(70, 70)[:, 3],                                            # small view of a large tensor
])
def test_a_spilled_value_reads_back_bit_for_bit(value):
    values = SpilledValues()
    values["a"] = value
    values["b"] = 7
    got = values["a"]
    assert got.dtype == value.dtype and got.shape == value.shape
    assert torch.equal(got.resolve_conj(), value.resolve_conj())
    assert values["b"] == 7 and set(values) == {"a", "b"} and len(values) == 2


def test_a_spilled_value_is_the_value_when_recorded():
    values = SpilledValues()
    big = torch.zeros(2048)
    values["x"] = big
    big.add_(1)  # a later in-place write does not change the recorded value
    assert float(values["x"].sum()) == 0.0
    assert values._where and not values._kept


def test_small_values_and_kept_ones_stay_in_memory_and_rekeyed_shares_the_file():
    values = SpilledValues()
    small, weight, big = torch.ones(SMALL // 8), torch.ones(SMALL), torch.full((SMALL,), 2.0)
    values["small"] = small
    values.keep("weight", weight)
    values["big"] = big
    assert values["small"] is small and values["weight"] is weight and values["big"] is not big
    other = values.rekeyed([("B", "big"), ("W", "weight"), ("gone", "missing")])
    assert set(other) == {"B", "W"} and other["W"] is weight and torch.equal(other["B"], big)
    del values["big"]
    assert "big" not in values and torch.equal(other["B"], big)


def test_the_trace_keeps_no_activation_alive_and_records_every_value():
    seen = []

    class Keeps(nn.Module):
        def forward(self, x):
            y = x * 2 + 1
            seen.append(weakref.ref(y))
            return y.relu().sum(1)

    x = torch.rand(8, 1024)
    captured = trace(Keeps(), (x,))
    gc.collect()
    assert seen and seen[0]() is None  # freed when the forward dropped it, as in a plain forward
    values = [captured.values[o] for o in captured.graph.operands if o in captured.values]
    assert any(isinstance(v, torch.Tensor) and torch.equal(v, x * 2 + 1) for v in values)


def test_a_given_up_model_is_freed_once_captured_and_writes_the_same_bytes(tmp_path):
    torch.manual_seed(0)
    model = Net().eval()
    kept = api.export(model, (_x(),), tmp_path / "kept", "m")
    alive = weakref.ref(model)
    given = api.GivenUp(model)
    del model
    freed_before_passes = []
    passes = api.run_passes

    def check_freed(*args, **kwargs):
        gc.collect()
        freed_before_passes.append(alive() is None)
        return passes(*args, **kwargs)

    try:
        api.run_passes = check_freed
        result = api.export(given, (_x(),), tmp_path / "given", "m")
    finally:
        api.run_passes = passes
    assert freed_before_passes == [True]
    assert set(result.paths) == set(kept.paths)
    for artefact, path in kept.paths.items():
        if artefact not in ("pnnxpy", "ncnnpy"):  # these name their own folder's files
            assert result.paths[artefact].read_bytes() == path.read_bytes(), artefact
    with pytest.raises(ConversionError, match="exported once"):
        given.take()


def test_a_mismatch_names_the_first_differing_operator_from_the_spilled_values(tmp_path, monkeypatch):
    monkeypatch.setitem(expression.INFIX, "add", "-")  # a converter bug: add rendered as subtraction
    spilled = []
    check = selfcheck.check

    def spy(graph, py_path, runs, *args):
        spilled.extend(bool(run.values._where) for run in runs)
        return check(graph, py_path, runs, *args)

    monkeypatch.setattr(selfcheck, "check", spy)
    with pytest.raises(ConversionError) as info:
        api.export(api.GivenUp(Net().eval()), (_x(),), tmp_path, "m")
    assert spilled == [True]
    assert "first differing operator pnnx.Expression pnnx_expr_0 (output " in str(info.value), str(info.value)


def test_the_lean_forward_deletes_each_local_after_its_last_read_and_computes_the_same(tmp_path):
    torch.manual_seed(0)
    result = api.export(Net().eval(), (_x(),), tmp_path, "m", self_check=False)
    py_path = result.paths["pnnxpy"]
    model = selfcheck.load_model(py_path, torch.device("cpu"))
    forward = selfcheck.lean_forward(model, py_path)
    assert forward is not model
    with torch.no_grad():
        assert torch.equal(forward(_x()), model(_x()))
    tree = ast.parse(py_path.read_text(encoding="utf-8"))
    function = next(f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Model"
                    for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
    body = selfcheck._with_dels(function)
    deleted = [n.id for s in body if isinstance(s, ast.Delete) for n in s.targets]
    assigned = {n.id for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert deleted and set(deleted) <= assigned | {a.arg for a in function.args.args}
    assert len(deleted) == len(set(deleted)) and isinstance(body[-1], ast.Return)


def test_a_forward_with_control_flow_is_run_as_it_is(tmp_path):
    path = tmp_path / "m_pnnx.py"
    path.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, v_0):\n"
                    "        for i in range(2):\n            v_0 = v_0 + 1\n        return v_0\n", encoding="utf-8")
    model = selfcheck.load_model(path, torch.device("cpu"))
    assert selfcheck.lean_forward(model, path) is model
