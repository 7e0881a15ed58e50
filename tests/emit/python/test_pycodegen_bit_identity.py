"""Models whose `_pnnx.py` once lost bit-identity with the model itself (the full conformance
tier's roundtrip check): a folded attention mask written as an nn.Parameter (a mask that
requires grad takes another attention kernel, even under no_grad), hand-written attention fused
into F.scaled_dot_product_attention (another kernel, another rounding), and F.embedding's
max_norm (the weight was saved after the forward had renormalised it in place). Plus where
the generated members live: the original module paths."""
from __future__ import annotations

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from pnnx_reference import api
from pnnx_reference.emit.python.members import plan_paths
from pycodegen_helpers import Builder, assert_bitwise, generate, import_file, run_generated


def _round_trip(tmp_path, model, inputs):
    """(outputs of a fresh copy of `model`, outputs of its converted `_pnnx.py`)."""
    fresh = copy.deepcopy(model).eval()
    with torch.no_grad():
        expected = fresh(*inputs)
    py = generate(api.capture(model.eval(), inputs), tmp_path)
    got = run_generated(py, *inputs)
    return got, expected if isinstance(expected, tuple) else (expected,)


class MaskedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)

    def forward(self, x):
        return self.m(x, src_mask=torch.triu(torch.full((5, 5), float("-inf")), diagonal=1))


def test_folded_mask_requires_no_grad_and_is_bit_identical(tmp_path):
    torch.manual_seed(0)
    got, expected = _round_trip(tmp_path, MaskedEncoder(), (torch.rand(5, 2, 8) * 2 - 1,))
    source = (tmp_path / "model_pnnx.py").read_text()
    assert "self.pnnx_fold_" in source and "(5, 5), 'float32', requires_grad=False)" in source
    assert_bitwise(got, expected)


class WindowAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv, self.proj = nn.Linear(16, 48), nn.Linear(16, 16)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(-1, 16, 3, 2, 8).permute(2, 0, 3, 1, 4)
        a = ((q * 0.3535533905932738) @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(-1, 16, 16))


def test_hand_written_attention_stays_as_written_and_bit_identical(tmp_path):
    torch.manual_seed(1)
    got, expected = _round_trip(tmp_path, WindowAttention(), (torch.rand(4, 16, 16) * 2 - 1,))
    assert "scaled_dot_product_attention" not in (tmp_path / "model_pnnx.py").read_text()
    assert_bitwise(got, expected)


class MaxNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(10, 16) * 2 - 1)

    def forward(self, x):
        return F.embedding(x, self.w, max_norm=1.0)


def test_max_norm_weight_is_saved_as_the_model_had_it(tmp_path):
    """The converted model starts from the weight before any renormalisation, as the model
    did, so its first forward renormalises the same rows the same way."""
    torch.manual_seed(2)
    model = MaxNorm()
    before = model.w.detach().clone()
    got, expected = _round_trip(tmp_path, model, (torch.randint(0, 10, (4, 4)),))
    assert torch.equal(import_file(tmp_path / "model_pnnx.py").Model().w.detach(), before)
    assert_bitwise(got, expected)


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 3))
        self.head = nn.ModuleDict({"out": nn.Linear(3, 2)})
        self.gate = nn.Module()
        self.gate.w = nn.Parameter(torch.rand(2))  # read by an expression: pnnx.Attribute `gate.w`

    def forward(self, x):
        return self.head["out"](self.body(x)) * self.gate.w


def test_generated_members_keep_the_module_paths(tmp_path):
    """The generated model has the original's module and parameter paths (its state_dict
    keys are the original's), so capture names its operators as before."""
    torch.manual_seed(3)
    model = Nested().eval()
    x = torch.rand(2, 4)
    got, expected = _round_trip(tmp_path, model, (x,))
    assert_bitwise(got, expected)
    generated = import_file(tmp_path / "model_pnnx.py").Model()
    assert set(generated.state_dict()) == set(model.state_dict())
    source = (tmp_path / "model_pnnx.py").read_text()
    assert "self.body['0'] = nn.Linear(" in source and "self.head.out(" in source and "self.gate.w = " in source


def _names_graph(names, attributes=()):
    b = Builder()
    cur = b.input(torch.rand(3))
    for name in names:
        cur = b.op("nn.ReLU", name, [cur], params={"inplace": False})
    for name in attributes:
        b.op("pnnx.Attribute", name, attrs={"data": torch.rand(3)})
    return b.output(cur)


def test_names_that_cannot_be_paths_stay_flat():
    graph = _names_graph(["a.b.0", "fc", "fc.x", "m.forward", "training.x", "k._p", "d.d", "d.d", "0.a"],
                         attributes=["p.0", "q.w"])
    assert plan_paths(graph) == {"a.b.0": ("a", "b", "0"), "q.w": ("q", "w")}


class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(10, 16, max_norm=1.0)

    def forward(self, x):
        return self.e(x)


def test_max_norm_module_weight_is_saved_as_the_model_had_it(tmp_path):
    torch.manual_seed(4)
    model = Lookup()
    with torch.no_grad():
        model.e.weight.mul_(3)
    before = model.e.weight.detach().clone()
    got, expected = _round_trip(tmp_path, model, (torch.randint(0, 10, (4, 4)),))
    assert torch.equal(import_file(tmp_path / "model_pnnx.py").Model().e.weight.detach(), before)
    assert_bitwise(got, expected)
