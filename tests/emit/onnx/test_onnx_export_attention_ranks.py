"""F.scaled_dot_product_attention to ONNX's Attention: grouped heads (enable_gqa, as LLaMA-style
decoders call it) and ranks above 4 (windowed vision attention), run in onnxruntime against
torch."""
from __future__ import annotations

import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import run_onnx
from onnx_export_util import assert_close, shape_mismatches
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import write_onnx


class Sdpa(nn.Module):
    def __init__(self, **kw) -> None:
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **self.kw)


def _export_run(model, inputs, tmp_path) -> onnx.ModelProto:
    torch.manual_seed(0)
    with torch.no_grad():
        want = model(*inputs)
    graph = capture(model, inputs)
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(graph, path)
    m = onnx.load(path)
    assert shape_mismatches(m, graph) == []
    assert_close(run_onnx(path, inputs), [want], atol=1e-5, rtol=1e-5)
    return m


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lq, sk", [(6, 6), (1, 7), (3, 7)])
def test_grouped_query_attention_is_one_attention_node(causal, lq, sk, tmp_path):
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 4, lq, 8), torch.randn(1, 2, sk, 8), torch.randn(1, 2, sk, 8)
    m = _export_run(Sdpa(is_causal=causal, enable_gqa=True), (q, k, v), tmp_path)
    assert [n.op_type for n in m.graph.node] == ["Attention"]


def test_grouped_query_attention_unbatched(tmp_path):
    torch.manual_seed(0)
    q, k, v = torch.randn(6, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    _export_run(Sdpa(enable_gqa=True), (q, k, v), tmp_path)


@pytest.mark.parametrize("shape", [(2, 3, 4, 7, 8), (1, 2, 2, 3, 5, 4)])
def test_attention_above_rank_four_folds_leading_axes(shape, tmp_path):
    torch.manual_seed(0)
    q, k, v = (torch.randn(*shape) for _ in range(3))
    m = _export_run(Sdpa(is_causal=True), (q, k, v), tmp_path)
    assert [n.op_type for n in m.graph.node].count("Attention") == 1


class Unfold(nn.Module):
    def __init__(self, dim: int, size: int, step: int) -> None:
        super().__init__()
        self.args = (dim, size, step)

    def forward(self, x):
        return x.unfold(*self.args)


@pytest.mark.parametrize("shape, args", [((1, 3, 10, 6), (2, 4, 2)), ((2, 9), (-1, 3, 3)), ((1, 4, 8, 8), (3, 2, 1)),
                                         ((7,), (0, 7, 1))])
def test_tensor_unfold_gathers_the_windows(shape, args, tmp_path):
    """Halo attention's neighbourhoods: x.unfold(dimension, size, step), a new trailing axis."""
    torch.manual_seed(0)
    _export_run(Unfold(*args), (torch.randn(*shape),), tmp_path)
