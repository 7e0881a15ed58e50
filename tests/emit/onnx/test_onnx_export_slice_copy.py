"""Writes into a slice, captured as `Tensor.slice_copy` (and torch.slice_scatter), exported to
ONNX as ScatterND and run in onnxruntime against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from onnx_export_util import assert_close, export_module
from slice_writes import (Write, copy_into_slice, fill_into_slice, random_inputs, setitem_broadcast,
                          setitem_channels, setitem_scalar, setitem_select, setitem_step2)


CASES = {
    "setitem_channels": (setitem_channels, [(1, 8, 6, 6), (1, 3, 6, 6)]),
    "copy_into_slice": (copy_into_slice, [(2, 4, 8, 5), (2, 4, 3, 5)]),
    "fill_into_slice": (fill_into_slice, [(2, 5, 4)]),
    "setitem_step2": (setitem_step2, [(1, 7, 6), (1, 3, 4)]),
    "setitem_select": (setitem_select, [(3, 4, 6), (3, 6)]),
    "setitem_scalar": (setitem_scalar, [(2, 3, 5)]),
    "setitem_broadcast": (setitem_broadcast, [(1, 4, 5, 5), (5,)]),
}


def _export_run(model, inputs, tmp_path):
    got, (want,), m, graph = export_module(model, inputs, tmp_path)
    assert any(op.type == "Tensor.slice_copy" for op in graph.ops)
    return got, want, m


@pytest.mark.parametrize("name", sorted(CASES))
def test_write_into_slice_matches_torch(name, tmp_path):
    body, shapes = CASES[name]
    inputs = random_inputs(shapes)
    (got,), want, m = _export_run(Write(body).eval(), inputs, tmp_path)
    assert_close([got], [want], atol=1e-6, rtol=1e-6)
    assert "ScatterND" in [n.op_type for n in m.graph.node]


class Scatter(nn.Module):
    def forward(self, x, src):
        return torch.slice_scatter(x * 1.0, src, dim=2, start=1, end=7, step=3)


def test_slice_scatter_matches_torch(tmp_path):
    torch.manual_seed(0)
    inputs = [torch.rand(1, 3, 8), torch.rand(1, 3, 2)]
    got, want, _, _ = export_module(Scatter(), inputs, tmp_path)
    assert_close(got[:1], want[:1], atol=1e-6, rtol=1e-6)
