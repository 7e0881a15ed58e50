"""Powers in ncnn: BinaryOp pow computes exp(y * log(x)), garbage for x <= 0, so an integer
exponent is built from squares and products (and a reciprocal when negative)."""
from __future__ import annotations

import pytest
import torch

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.formats import ncnn_param

CASES = {
    "square": (lambda x: x ** 2, {"UnaryOp": 1, "BinaryOp": 0}),
    "cube": (lambda x: torch.pow(x, 3), {"UnaryOp": 1, "BinaryOp": 1}),
    "seventh": (lambda x: x.pow(7), {"UnaryOp": 2, "BinaryOp": 2}),
    "inverse_square": (lambda x: x ** -2.0, {"UnaryOp": 2, "BinaryOp": 0}),
    "first_is_identity_in_a_sum": (lambda x: x ** 1 + 1.0, {"UnaryOp": 0, "BinaryOp": 1}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_powers_of_negative_bases_match_torch(name, tmp_path):
    fn, counts = CASES[name]
    torch.manual_seed(0)
    x = torch.rand(1, 3, 4, 5) * 3 - 2
    x = torch.where(x.abs() < 0.25, torch.full_like(x, -0.5), x)  # keep 1/x**2 moderate
    model, base = Fn(fn), tmp_path / "m"
    write_ncnn(capture(model, (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    assert_close(run_ncnn(base, [x], "fp32"), torch_outputs(model, [x]), FP32, name)
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert {t: types.count(t) for t in counts} == counts, types
