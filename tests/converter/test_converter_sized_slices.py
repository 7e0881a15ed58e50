"""Slices whose bounds are sizes: with one input shape the sizes fold and each index is one
static Tensor.slice, as before; with inputshape2 the bounds that change stay `$start`/`$end`
inputs computed from sizes, and the regenerated `_pnnx.py` matches at both shapes (self-check)."""
from __future__ import annotations

import torch
import torch.nn as nn

from pnnx_reference.api import capture, export


class Sized(nn.Module):
    def forward(self, x):
        return x[:, :, :x.size(2) // 2, 1:x.size(3) - 1] * 2, x[..., 1:, :x.shape[-1] // 2] + 1


def _slices(graph):
    return [op for op in graph.ops if op.type == "Tensor.slice"]


def test_folded_size_bounds_are_one_static_slice_per_index():
    slices = _slices(capture(Sized().eval(), (torch.rand(1, 3, 8, 10),)))
    assert [op.params["dims"] for op in slices] == [[2, 3], [-2, -1]]
    assert [op.params["ends"] for op in slices] == [[4, 9], [2147483647, 5]]
    assert all(len(op.inputs) == 1 for op in slices)


def test_bounds_that_follow_the_input_are_inputs(tmp_path):
    torch.manual_seed(0)
    result = export(Sized().eval(), (torch.rand(1, 3, 8, 10),), tmp_path, "m", inputs2=(torch.rand(1, 3, 12, 6),))
    text = open(result.paths["pnnxparam"]).read()
    assert "$end=" in text and "expr=floor_divide(size(@0,2),2)" in text
