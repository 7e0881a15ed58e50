"""builders.py: the rendered sources are standalone modules that do what they describe."""
from __future__ import annotations

import pytest
import torch

from pnnx_op_cases.builders import (Param, bools, call_case, case_id, ints, module_case, rand,
                                    render_source, vid)


def test_module_case_source_is_standalone_and_runs():
    c = module_case("nn.Conv2d", "k3_s2", "nn.Conv2d(3, 16, 3, stride=2)", [rand(1, 3, 9, 9)])
    assert c.source.startswith("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n")
    ns: dict = {}
    exec(c.source, ns)          # nothing else needed in scope
    assert isinstance(ns["Model"](), torch.nn.Module)
    (out,) = c.run_eager()
    assert out.shape == (1, 16, 4, 4)
    assert c.id == "nn.Conv2d/k3_s2" and c.op == "nn.Conv2d" and c.tier == "full"


def test_call_case_params_are_scaled_and_deterministic():
    c = call_case("F.conv2d", "p", "F.conv2d(x0, self.w0, stride=2)", [rand(1, 3, 9, 9)],
                  params={"w0": (16, 3, 3, 3), "b": Param((4,), low=2, high=3, buffer=True)})
    m = c.make_model()
    assert isinstance(m.w0, torch.nn.Parameter) and m.w0.min() >= -1 and m.w0.max() < 1
    assert "b" in dict(m.named_buffers()) and m.b.min() >= 2 and m.b.max() < 3
    assert torch.equal(c.make_model().w0, m.w0)
    assert c.run_eager()[0].shape == (1, 16, 4, 4)


def test_integer_params_and_inputs():
    c = call_case("torch.index_select", "i", "torch.index_select(x0, 0, self.idx)",
                  [rand(5, 3)], params={"idx": Param((4,), low=0, high=5, dtype="i64")})
    assert c.run_eager()[0].shape == (4, 3)
    c = call_case("torch.where", "b", "torch.where(x0, x1, x2)", [bools(3, 4), ints(3, 4), ints(3, 4)])
    assert {"bool", "integer", "multi-input"} <= c.tags
    x = c.make_inputs()
    assert x[0].dtype == torch.bool and x[1].dtype == torch.int64


def test_multiple_outputs_and_pre_lines():
    c = module_case("nn.MaxPool2d", "idx", "nn.MaxPool2d(2, return_indices=True)",
                    [rand(1, 3, 4, 6)], pre="x0 = x0.transpose(2, 3)", ret=("y[0]", "y[1]"))
    out = c.run_eager()
    assert len(out) == 2 and out[0].shape == (1, 3, 3, 2) and out[1].dtype == torch.int64
    assert {"multi-output", "noncontiguous"} <= c.tags


def test_init_lines_run_under_no_grad_with_the_weight_seed():
    c = module_case("nn.BatchNorm1d", "s", "nn.BatchNorm1d(4)", [rand(2, 4)],
                    init="self.m.running_var.uniform_(0.5, 1.5)")
    a, b = c.make_model(), c.make_model()
    assert torch.equal(a.m.running_var, b.m.running_var)
    assert not torch.equal(a.m.running_var, torch.ones(4))


def test_reason_tags_require_reasons():
    with pytest.raises(ValueError, match="need a reason"):
        module_case("nn.ReLU", "x", "nn.ReLU()", [rand(3)], tags={"no-trace"})
    c = module_case("nn.ReLU", "x", "nn.ReLU()", [rand(3)], reasons={"random": "because"},
                    smoke=True)
    assert {"random", "smoke"} <= c.tags and c.reasons["random"] == "because"


@pytest.mark.parametrize("bad", ["nn.ReLU/a b", "nn.ReLU/", "/x", "nn.ReLU/a/b", "nn.ReLU/é"])
def test_unreadable_ids_are_rejected(bad):
    op, _, variant = bad.partition("/")
    with pytest.raises(ValueError):
        case_id(op, variant)


def test_vid():
    assert vid("2d", k=3, s=2, bias=False, ceil=True) == "2d_k3_s2_ceil"
    assert vid(k=(3, 1), p=-1) == "k3x1_pm1"
    assert vid() == "default"


def test_render_source_without_params_or_inputs():
    src = render_source([], 0, ["return torch.ones(2)"])
    ns: dict = {}
    exec(src, ns)
    assert ns["Model"]()().tolist() == [1.0, 1.0]


def test_noncontiguous_tag_only_for_strided_views_of_inputs():
    plain = module_case("nn.ReLU", "a", "nn.ReLU()", [rand(3)],
                        pre="m0 = torch.zeros(3)\nm0[0] = 1", call="self.m(x0) + m0")
    assert "noncontiguous" not in plain.tags
    sliced = module_case("nn.ReLU", "b", "nn.ReLU()", [rand(3, 4)], pre="x0 = x0[:, ::2]")
    assert "noncontiguous" in sliced.tags
    assert sliced.run_eager()[0].shape == (3, 2)
