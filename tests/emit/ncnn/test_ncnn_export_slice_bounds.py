"""Slice bounds past either end clamp as Python's do (`x[-100:100]` is all of x): the Crop box is
clamped into the blob, never a negative start that ncnn would read as another box."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn


class Sliced(nn.Module):
    def __init__(self, start, end):
        super().__init__()
        self.start, self.end = start, end

    def forward(self, x):
        return x[:, self.start:self.end] * 2


@pytest.mark.parametrize("start, end", [(-100, 100), (-100, -2), (1, 100), (-5, 3)])
def test_out_of_range_bounds_clamp(tmp_path, start, end):
    model, inputs = Sliced(start, end).eval(), [torch.rand(1, 3, 8)]
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, f"x[:, {start}:{end}]")
