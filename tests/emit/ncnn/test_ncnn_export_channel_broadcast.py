"""A (c) vector reshaped to (c,1,1) against a (c,h,w) blob is one BinaryOp on the (c) blob
(ncnn broadcasts a 1-d blob of the outer dim's size along it), as upstream writes it; a vector
that torch broadcasts along the last dim keeps its Reshape."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn


class ChannelNoBatch(nn.Module):
    def forward(self, x, y):
        y = y.reshape(4, 1, 1)
        return x * y, y + x


class ChannelRows(nn.Module):
    def forward(self, x, y):
        y = y.reshape(4, 1)
        return x - y, y / (x + 1)


class LastDim(nn.Module):
    def forward(self, x, y):
        return x * y, y + x


class ChannelBatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)

    def forward(self, x, y):
        x = self.conv(x)
        y = y.reshape(2, 4, 1, 1)
        return x * y, y + x


CASES = {  # name: (model, input shapes, a Reshape is written)
    "channel_nobatch": (ChannelNoBatch, [(4, 5, 7), (4,)], False),
    "channel_square": (ChannelNoBatch, [(4, 5, 4), (4,)], False),
    "channel_rows": (ChannelRows, [(4, 4), (4,)], False),
    "last_dim": (LastDim, [(4,), (4, 5, 4)], True),
    "channel_batch": (ChannelBatch, [(2, 4, 5, 7), (2, 4)], True),
}


@pytest.mark.parametrize("mode", ["fp32", "default"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_channel_broadcast(tmp_path, name, mode):
    cls, shapes, reshape = CASES[name]
    torch.manual_seed(0)
    model, inputs = cls().eval(), [torch.rand(*s) for s in shapes]
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=True)
    assert ("Reshape" in open(f"{base}.ncnn.param").read()) == reshape
    assert_close(run_ncnn(base, inputs, mode), torch_outputs(model, inputs), FP32 if mode == "fp32" else LOW_PRECISION, name)
