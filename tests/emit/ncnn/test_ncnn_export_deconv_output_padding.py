"""A transposed convolution's output_padding per axis: ncnn reads output_pad_bottom (19) and
output_pad_behind (20) as output_pad_right (18) when absent, so padding only the width must still
write 19=0 (and 20=0), or ncnn computes a taller (deeper) output than torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn

CASES = {
    "2d_w_only": (lambda: nn.ConvTranspose2d(8, 4, (5, 4), stride=2, output_padding=(0, 1), groups=4), (1, 8, 6, 5)),
    "2d_dilated": (lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=(5, 6), output_padding=(1, 0), dilation=2),
                   (1, 4, 9, 7)),
    "3d_w_only": (lambda: nn.ConvTranspose3d(4, 6, 3, stride=2, output_padding=(0, 0, 1)), (1, 4, 3, 4, 5)),
    "3d_hw": (lambda: nn.ConvTranspose3d(4, 4, 3, stride=(2, 2, 3), output_padding=(0, 1, 2), groups=2),
              (1, 4, 3, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_padding_of_one_axis(tmp_path, name):
    make, shape = CASES[name]
    torch.manual_seed(0)
    model, inputs = make().eval(), [torch.rand(*shape)]
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, name)
