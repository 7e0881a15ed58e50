"""moduleop=: a kept module with a captured body becomes a call of a model-local ONNX function
whose weights are function inputs fed from main-graph initializers."""
from __future__ import annotations

import onnx
import pytest
import torch
import torch.nn as nn

from conformance_runs import run_onnx
from onnx_export_util import assert_close, shape_mismatches
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import build_model, write_onnx
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import pnnx_param


class Focus(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c1 * 4, c2, 3, 1, 1, bias=False), nn.BatchNorm2d(c2), nn.SiLU())

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        return self.conv(x)


class Halves(nn.Module):
    """No parameters, two results."""

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return torch.sigmoid(a) * b, a - b


class Stem(nn.Module):
    """A moduleop with another one inside."""

    def __init__(self):
        super().__init__()
        self.focus = Focus(3, 8)
        self.halves = Halves()

    def forward(self, x):
        return self.halves(self.focus(x))[0]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.focus = Focus(3, 8)
        self.again = Focus(3, 8)
        self.halves = Halves()
        self.stem = Stem()
        self.head = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        gated, diff = self.halves(self.focus(x) + self.again(x))
        return self.head(gated) + diff + self.stem(x)


MODULEOP = [Focus, Halves, Stem]


def _model():
    torch.manual_seed(0)
    model = Net().eval()
    for bn in (m for m in model.modules() if isinstance(m, nn.BatchNorm2d)):
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    return model


def _export(tmp_path, fp16=False):
    model, x = _model(), torch.rand(1, 3, 16, 16)
    graph = capture(model, x, moduleop=MODULEOP)
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(graph, path, fp16=fp16)  # checks with onnx.checker full_check
    with torch.no_grad():
        want = model(x).numpy()
    return graph, onnx.load(path), run_onnx(path, [x])[0], want


def test_moduleop_is_a_local_function_and_matches_torch(tmp_path):
    graph, model, got, want = _export(tmp_path)
    assert_close([got], [want], rtol=0, atol=1e-5)
    domain = Focus.__module__
    assert (domain, 1) in {(o.domain, o.version) for o in model.opset_import}
    names = {(f.domain, f.name) for f in model.functions}
    assert names == {(domain, "Focus"), (domain, "Halves"), (domain, "Stem")}  # focus and again share one
    calls = [n for n in model.graph.node if n.domain == domain]
    assert sorted(n.op_type for n in calls) == ["Focus", "Focus", "Halves", "Stem"]
    assert shape_mismatches(model, graph) == []


def test_function_weights_come_from_main_graph_initializers(tmp_path):
    _, model, _, _ = _export(tmp_path)
    focus = next(f for f in model.functions if f.name == "Focus")
    assert list(focus.input) == ["0", "conv.0.weight", "conv.1.weight", "conv.1.bias", "conv.1.running_mean",
                                 "conv.1.running_var"]
    assert "Conv" in {n.op_type for n in focus.node} and "BatchNormalization" in {n.op_type for n in focus.node}
    call = next(n for n in model.graph.node if n.op_type == "Focus" and n.name.startswith("focus/"))
    assert list(call.input)[1:] == ["focus.conv.0.weight", "focus.conv.1.weight", "focus.conv.1.bias",
                                    "focus.conv.1.running_mean", "focus.conv.1.running_var"]
    initializers = {i.name for i in model.graph.initializer}
    assert set(call.input[1:]) <= initializers
    stem = next(f for f in model.functions if f.name == "Stem")
    assert "Focus" in {n.op_type for n in stem.node}  # the nested moduleop calls the shared function


def test_fp16_stores_half_weights_and_still_runs(tmp_path):
    _, model, got, want = _export(tmp_path, fp16=True)
    halves = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT16]
    assert any(i.name.startswith("focus.conv.0.weight") for i in halves)
    assert_close([got], [want], rtol=0, atol=1e-2)


def test_moduleop_read_from_pnnx_param_has_no_onnx_form(tmp_path):
    graph = capture(_model(), torch.rand(1, 3, 16, 16), moduleop=MODULEOP)
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    loaded = pnnx_param.load(tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    with pytest.raises(UnsupportedOperator, match=r"\.Focus \(focus\): no ONNX lowering"):
        build_model(loaded)
