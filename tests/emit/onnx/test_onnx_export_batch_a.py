"""Max pooling with indices, max_unpool, Tensor.index, masked_select, repeat_interleave, diag,
cross, unfold and atan2: captured from torch, exported to ONNX, run in onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn
from onnx_export_util import assert_close, export_module
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import write_onnx


class PoolUnpool(nn.Module):
    def __init__(self, n, k, s, p) -> None:
        super().__init__()
        self.pool = getattr(F, f"max_pool{n}d")
        self.unpool = getattr(nn, f"MaxUnpool{n}d")(k, s, p)
        self.k, self.s, self.p = k, s, p

    def forward(self, x):
        y, i = self.pool(x, self.k, self.s, self.p, return_indices=True)
        return y, i, self.unpool(y * 2.0, i)


def _cross(a, b):
    return torch.cross(a, b, dim=1)


CASES = {
    # name: (model, input shapes, ONNX op that must appear)
    "pool_unpool1d": (PoolUnpool(1, 2, 2, 0), [(2, 3, 9)], "ScatterElements"),
    "pool_unpool2d_p1": (PoolUnpool(2, 3, 2, 1), [(1, 4, 7, 7)], "ScatterElements"),
    "pool_unpool3d": (PoolUnpool(3, 2, 2, 0), [(1, 2, 4, 6, 4)], "ScatterElements"),
    "index_d1": (Fn(lambda x: x[:, torch.tensor([4, 0, -1])]), [(2, 6, 3)], "Gather"),
    "index_two": (Fn(lambda x: x[torch.tensor([0, -1, 2]), torch.tensor([1, 3, -2])]),
                  [(4, 5, 2)], "GatherND"),
    "index_mask": (Fn(lambda x: x[x > 0]), [(3, 5)], "Compress"),
    "masked_select": (Fn(lambda x, y: torch.masked_select(x, y > 0)), [(2, 3, 4), (4,)],
                      "Compress"),
    "repeat_interleave_d1": (Fn(lambda x: torch.repeat_interleave(x, 3, dim=1)), [(2, 5)],
                             "Expand"),
    "repeat_interleave_flat": (Fn(lambda x: torch.repeat_interleave(x, 2)), [(2, 3)], "Expand"),
    "diag_vec_offset": (Fn(lambda x: torch.diag(x, -2)), [(4,)], "ScatterND"),
    "diag_mat_offset": (Fn(lambda x: torch.diag(x, 1)), [(4, 6)], "GatherND"),
    "cross_d1": (Fn(_cross), [(2, 3, 4), (2, 3, 4)], "Sub"),
    "unfold": (nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), [(2, 3, 6, 7)],
               "Conv"),
    "atan2": (Fn(torch.atan2), [(3, 4), (3, 4)], "Atan"),
    "nn_maxpool_indices": (nn.MaxPool2d(3, 2, 1, return_indices=True), [(2, 3, 7, 7)], "Mod"),
}


def _export_run(model, inputs, tmp_path):
    got, want, m, _ = export_module(model, inputs, tmp_path)
    return got, want, m


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_matches_torch(name, tmp_path):
    model, shapes, onnx_op = CASES[name]
    torch.manual_seed(0)
    inputs = [torch.randn(*s) for s in shapes]
    got, want, m = _export_run(model.eval(), inputs, tmp_path)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    assert_close(got, want, atol=1e-6, rtol=1e-5)
    assert onnx_op in [n.op_type for n in m.graph.node]


def test_atan2_quadrants_and_zeros(tmp_path):
    y = torch.tensor([1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, 2.0, -2.0, 0.0])
    x = torch.tensor([1.0, -1.0, -1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 0.0, 3.0])
    got, want, _ = _export_run(Fn(torch.atan2), [y, x], tmp_path)
    assert_close(got[:1], want[:1], atol=1e-6, rtol=1e-6)


def test_pool_indices_are_per_plane(tmp_path):
    # later planes would carry offsets of n*C*H*W with ONNX's own convention
    x = torch.randn(2, 3, 6, 6)
    got, want, _ = _export_run(Fn(lambda t: F.max_pool2d(t, 2, return_indices=True)), [x],
                               tmp_path)
    assert got[1].max() < 36
    np.testing.assert_array_equal(got[1], want[1])


def test_repeat_interleave_tensor_repeats_is_unsupported(tmp_path):
    model = Fn(lambda x: torch.repeat_interleave(x, torch.tensor([1, 2, 3]), dim=0))
    with pytest.raises(Exception, match="repeats must be a constant integer"):
        write_onnx(capture(model, (torch.randn(3, 4),)), tmp_path / "m.pnnx.onnx")
