"""Strided slices in ncnn (Crop has no step): an axis whose length the step divides is split
into (length/step, step) by a Reshape, index 0 of the inner axis cropped and the axes merged
back; otherwise one Crop per kept index and a Concat."""
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
    "focus_h_then_w": (lambda x: x[..., 1::2, ::2], (1, 3, 8, 10), {"Reshape": 4, "Concat": 0}),
    "channels_step3": (lambda x: x[:, ::3], (1, 9, 4, 5), {"Reshape": 2, "Concat": 0}),
    "rank2_rows": (lambda x: x[:, 2:10:4], (1, 12, 6), {"Reshape": 2, "Concat": 0}),
    "uneven_falls_back": (lambda x: x[:, :, ::2], (1, 4, 7, 3), {"Reshape": 0, "Concat": 1}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_strided_slice_matches_torch(name, tmp_path):
    fn, shape, counts = CASES[name]
    torch.manual_seed(0)
    model, x = Fn(fn), torch.rand(shape)
    base = tmp_path / "m"
    write_ncnn(capture(model, (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    assert_close(run_ncnn(base, [x], "fp32"), torch_outputs(model, [x]), FP32, name)
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert {t: types.count(t) for t in counts} == counts, types
