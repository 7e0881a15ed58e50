"""ncnn.param has no infinity or NaN (issue 33 item 13): ncnn's loader takes `inf` and `nan`
for strings and refuses `-inf`. An infinite clamp bound is written as the float range's end
(what no bound is); any other non-finite param makes the ncnn emitter decline the model."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from fn_modules import Fn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference import api
from pnnx_reference.formats import ncnn_param
from pnnx_reference.validate import validate


@pytest.mark.parametrize("fn", [lambda x: torch.clamp(x, max=math.inf), lambda x: F.hardtanh(x, -math.inf, 0.5),
                                lambda x: torch.clamp(x, min=-math.inf, max=0.25)], ids=["max", "hardtanh", "min"])
def test_an_infinite_clamp_bound_loads_and_matches(fn, tmp_path):
    torch.manual_seed(0)
    x = torch.rand(1, 3, 4, 5) * 4 - 2
    result = api.export(Fn(fn), (x,), tmp_path, "m", fp16=False)
    param = result.paths["ncnnparam"]
    assert validate(param) == [] and "inf" not in param.read_text()
    assert_close(run_ncnn(tmp_path / "m", [x], "fp32"), torch_outputs(Fn(fn), [x]), FP32, "clamp")


def test_a_non_finite_param_is_declined_not_written(tmp_path):
    result = api.export(Fn(lambda x: x * math.inf), (torch.rand(1, 3, 4, 5),), tmp_path, "m")
    assert result.unsupported["ncnn"] == ("unsupported: BinaryOp (mul_0): float inf cannot be written to "
                                          "ncnn.param (it has no infinity or NaN)")
    assert not (tmp_path / "m.ncnn.param").exists() and not (tmp_path / "m.ncnn.bin").exists()


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_the_writer_refuses_a_non_finite_float(value):
    with pytest.raises(ValueError, match="cannot be written to ncnn.param"):
        ncnn_param.dump_layer(ncnn_param.NcnnLayer("BinaryOp", "b", ["x"], ["y"], {0: 2, 1: 1, 2: value}))
