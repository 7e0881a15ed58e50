"""Writes into a slice, captured as `Tensor.slice_copy` (and torch.slice_scatter), exported to
ONNX as ScatterND and run in onnxruntime against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from onnx_export_util import export_module


class Write(nn.Module):
    def __init__(self, body) -> None:
        super().__init__()
        self.body = body

    def forward(self, *xs):
        y = xs[0] * 1.0
        self.body(y, *xs[1:])
        return y


def _setitem_channels(y, x):
    y[:, 2:5] = x


def _copy_into_slice(y, x):
    y[:, :, 1:4].copy_(x)


def _fill_into_slice(y):
    y[:, 1:3].fill_(-1.0)


def _setitem_step2(y, x):
    y[:, 1::2, 2:6] = x


def _setitem_select(y, x):
    y[:, 1] = x


def _setitem_scalar(y):
    y[..., -2:] = 0.5


def _setitem_broadcast(y, x):
    y[:, 1:3] = x


CASES = {
    "setitem_channels": (_setitem_channels, [(1, 8, 6, 6), (1, 3, 6, 6)]),
    "copy_into_slice": (_copy_into_slice, [(2, 4, 8, 5), (2, 4, 3, 5)]),
    "fill_into_slice": (_fill_into_slice, [(2, 5, 4)]),
    "setitem_step2": (_setitem_step2, [(1, 7, 6), (1, 3, 4)]),
    "setitem_select": (_setitem_select, [(3, 4, 6), (3, 6)]),
    "setitem_scalar": (_setitem_scalar, [(2, 3, 5)]),
    "setitem_broadcast": (_setitem_broadcast, [(1, 4, 5, 5), (5,)]),
}


def _export_run(model, inputs, tmp_path):
    got, (want,), m, graph = export_module(model, inputs, tmp_path)
    assert any(op.type == "Tensor.slice_copy" for op in graph.ops)
    return got, want, m


@pytest.mark.parametrize("name", sorted(CASES))
def test_write_into_slice_matches_torch(name, tmp_path):
    body, shapes = CASES[name]
    torch.manual_seed(0)
    inputs = [torch.rand(*s) * 2 - 1 for s in shapes]
    (got,), want, m = _export_run(Write(body).eval(), inputs, tmp_path)
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=1e-6)
    assert "ScatterND" in [n.op_type for n in m.graph.node]


class Scatter(nn.Module):
    def forward(self, x, src):
        return torch.slice_scatter(x * 1.0, src, dim=2, start=1, end=7, step=3)


def test_slice_scatter_matches_torch(tmp_path):
    torch.manual_seed(0)
    inputs = [torch.rand(1, 3, 8), torch.rand(1, 3, 2)]
    got, want, _, _ = export_module(Scatter(), inputs, tmp_path)
    np.testing.assert_allclose(got[0], want[0], atol=1e-6, rtol=1e-6)
