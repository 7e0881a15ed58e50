"""Real modules captured by the converter, exported to ONNX and run in onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import run_onnx
from onnx_export_util import assert_close, run_model, shape_mismatches
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import build_model, write_onnx


def _export_compare(model, inputs, tmp_path, atol=1e-4, fp16=False):
    torch.manual_seed(0)
    model = model.eval()
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    graph = capture(model, inputs)
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(graph, path, fp16=fp16)
    m = onnx.load(path)
    assert shape_mismatches(m, graph) == []
    assert_close(run_onnx(path, inputs), _flatten(want), atol=atol, rtol=atol)
    return m


def _flatten(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    return [t for v in value for t in _flatten(v)]


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(x)))
        y = F.hardswish(self.dw(y)) + y[:, :, ::2, ::2]
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return torch.softmax(self.fc(y), dim=1)


def test_small_cnn(tmp_path):
    torch.manual_seed(0)
    m = _export_compare(SmallNet(), (torch.rand(2, 3, 16, 16),), tmp_path)
    kinds = [n.op_type for n in m.graph.node]
    assert "Gather" not in kinds and "Shape" not in kinds and "Unsqueeze" not in kinds


def test_small_cnn_fp16_weights(tmp_path):
    torch.manual_seed(0)
    m = _export_compare(SmallNet(), (torch.rand(2, 3, 16, 16),), tmp_path, atol=2e-2, fp16=True)
    floats = [i for i in m.graph.initializer if i.data_type in (onnx.TensorProto.FLOAT,
                                                                onnx.TensorProto.FLOAT16)]
    big = [i for i in floats if np.prod(i.dims) > 8]
    assert big and all(i.data_type == onnx.TensorProto.FLOAT16 for i in big)
    assert m.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    assert m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT


class Recurrent(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn = kind(6, 8, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):
        return self.rnn(x)


@pytest.mark.parametrize("kind", [nn.LSTM, nn.GRU, nn.RNN])
def test_recurrent_two_layers_bidirectional_with_states(kind, tmp_path):
    torch.manual_seed(0)
    m = _export_compare(Recurrent(kind), (torch.rand(3, 5, 6),), tmp_path)
    assert sum(n.op_type == kind.__name__ for n in m.graph.node) == 2  # one node per layer


class Attention(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=batch_first)

    def forward(self, x):
        return self.mha(x, x, x)


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_with_weights(batch_first, tmp_path):
    torch.manual_seed(0)
    m = _export_compare(Attention(batch_first), (torch.rand(2, 7, 16),), tmp_path)
    assert [n.op_type for n in m.graph.node].count("Attention") == 1


def test_transformer_encoder_layer(tmp_path):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True, activation="gelu")
    m = _export_compare(layer, (torch.rand(2, 6, 16),), tmp_path)
    kinds = [n.op_type for n in m.graph.node]
    assert kinds.count("LayerNormalization") == 2 and "Gelu" in kinds


class MaskedAttention(nn.Module):
    """Attention modules called with masks made in forward (constants of the graph): a bool key
    padding mask, a bool or float (L, S) mask, or both."""

    def __init__(self, kind):
        super().__init__()
        torch.manual_seed(0)
        self.kind = kind
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.encoder = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0)
        self.decoder = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True)

    def forward(self, x, y):
        padding = torch.arange(6).unsqueeze(0) >= torch.tensor([[6], [4]])
        causal = torch.triu(torch.full((6, 6), float("-inf")), diagonal=1)
        if self.kind == "mha_both":
            return self.mha(x, x, x, key_padding_mask=padding, attn_mask=causal.isinf())
        if self.kind == "encoder_both":
            return self.encoder(x.transpose(0, 1), src_mask=causal, src_key_padding_mask=padding)
        memory = torch.zeros(6, 5)
        memory[:, -1] = float("-inf")
        return self.decoder(x, y, tgt_mask=causal, memory_mask=memory, tgt_key_padding_mask=padding)


@pytest.mark.parametrize("kind", ["mha_both", "encoder_both", "decoder"])
def test_attention_masks_are_added_to_the_scores(kind, tmp_path):
    """torch's merge of the masks (a bool mask -inf where True, the key padding mask over every
    query) as one float mask input of each Attention node, expanded to the query rows."""
    m = _export_compare(MaskedAttention(kind), (torch.rand(2, 6, 16), torch.rand(2, 5, 16)), tmp_path)
    attention = [n for n in m.graph.node if n.op_type == "Attention"]
    assert attention and all(len(n.input) == 4 for n in attention)


def test_dynamic_batch_from_two_shapes(tmp_path):
    torch.manual_seed(0)
    model = SmallNet().eval()
    graph = capture(model, (torch.rand(1, 3, 16, 16),), inputs2=(torch.rand(3, 3, 16, 16),))
    dims = graph.inputs()[0].outputs[0].shape
    assert dims[0] == -1, f"converter did not mark the batch dimension dynamic: {dims}"
    m = build_model(graph, fp16=False)
    onnx.checker.check_model(m, full_check=True)
    assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    for batch in (1, 4):
        x = torch.rand(batch, 3, 16, 16)
        with torch.no_grad():
            want = model(x)
        assert_close(run_model(m, [x], tmp_path, f"b{batch}"), [want], atol=1e-4, rtol=1e-4)


class _PaddedSdpa(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def test_sdpa_mask_with_one_row_is_expanded_to_the_query_rows(tmp_path):
    """A key padding mask (N, 1, 1, S), as torch.export writes nn.TransformerEncoderLayer's:
    onnxruntime's Attention refuses to broadcast it over the query rows."""
    mask = torch.zeros(2, 1, 1, 5).masked_fill(torch.arange(5) >= 3, float("-inf"))
    m = _export_compare(_PaddedSdpa(), (torch.rand(2, 2, 4, 8), torch.rand(2, 2, 5, 8), torch.rand(2, 2, 5, 8), mask),
                        tmp_path)
    assert "Expand" in [n.op_type for n in m.graph.node]
