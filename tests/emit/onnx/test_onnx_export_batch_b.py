"""ONNX lowerings of functional recurrent ops (torch.gru / torch.rnn_*), transformer decoder
layers and nn.Transformer, embedding bags, Tensor.index_put and integer bit shifts: captured
from real modules, exported, run in onnxruntime and compared with torch."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import FnOf
from onnx_export_util import assert_close, export_module
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import build_model
from pnnx_reference.errors import UnsupportedOperator


def _check(model, inputs, op_type: str, atol: float = 1e-5):
    """Export `model`, assert the graph holds `op_type`, and compare onnxruntime with torch."""
    with tempfile.TemporaryDirectory() as tmp:
        got, want, _, graph = export_module(model.eval(), inputs, Path(tmp))
    assert op_type in {op.type for op in graph.ops}
    assert [g.dtype for g in got] == [w.dtype for w in want]
    assert_close(got, want, atol=atol, rtol=atol)


# --- torch.gru / torch.rnn_tanh / torch.rnn_relu ---------------------------------------------

@pytest.mark.parametrize("mode,forward,op_type", [("GRU", nn.GRU.forward, "torch.gru"),
                                                  ("RNN_TANH", nn.RNN.forward, "torch.rnn_tanh"),
                                                  ("RNN_RELU", nn.RNN.forward, "torch.rnn_relu")])
@pytest.mark.parametrize("layers,bidirectional,batch_first", [(1, False, False), (2, True, True)])
def test_functional_recurrent(mode, forward, op_type, layers, bidirectional, batch_first):
    """nn.RNNBase(mode) records the functional op with its weights as graph inputs."""
    torch.manual_seed(0)
    h0 = torch.randn(layers * (2 if bidirectional else 1), 2, 6)
    model = FnOf(lambda m, x: forward(m.rnn, x, m.h0), h0=h0)
    model.rnn = nn.RNNBase(mode, 4, 6, num_layers=layers, bidirectional=bidirectional,
                           batch_first=batch_first)
    _check(model, [torch.randn(2, 5, 4) if batch_first else torch.randn(5, 2, 4)], op_type)


# --- transformer decoder ----------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_decoder_layer(norm_first, batch_first):
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=norm_first,
                                       batch_first=batch_first, activation="gelu")
    tgt, memory = torch.randn(3, 4, 8), torch.randn(3, 6, 8)
    if not batch_first:
        tgt, memory = tgt.transpose(0, 1), memory.transpose(0, 1)
    _check(layer, [tgt, memory], "nn.TransformerDecoderLayer")


def test_transformer_decoder_stack():
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    _check(nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(8)),
           [torch.randn(4, 2, 8), torch.randn(5, 2, 8)], "nn.TransformerDecoderLayer")


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(norm_first):
    torch.manual_seed(0)
    model = nn.Transformer(8, 2, num_encoder_layers=2, num_decoder_layers=1,
                           dim_feedforward=16, dropout=0.0, norm_first=norm_first)
    _check(model, [torch.randn(5, 2, 8), torch.randn(4, 2, 8)], "nn.Transformer")


def test_decoder_mask_given_as_an_input_is_added_to_the_scores():
    model = FnOf(lambda m, t, mem, mask: m.layer(t, mem, tgt_mask=mask))
    model.layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    _check(model, [torch.randn(4, 2, 8), torch.randn(5, 2, 8), mask], "nn.TransformerDecoderLayer")


def test_decoder_masks_given_by_position_are_refused():
    model = FnOf(lambda m, t, mem, mask: m.layer(t, mem, mask))
    model.layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    graph = capture(model.eval(), [torch.randn(4, 2, 8), torch.randn(5, 2, 8),
                                   nn.Transformer.generate_square_subsequent_mask(4)])
    graph.ops[[op.type for op in graph.ops].index("nn.TransformerDecoderLayer")].inputnames.clear()
    with pytest.raises(UnsupportedOperator, match="TransformerDecoderLayer"):
        build_model(graph)


# --- embedding bags ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d(mode):
    torch.manual_seed(0)
    _check(nn.EmbeddingBag(20, 8, mode=mode), [torch.randint(0, 20, (3, 5))], "nn.EmbeddingBag")


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("last", [False, True])
def test_embedding_bag_offsets_with_empty_bag(mode, last):
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(20, 8, mode=mode, include_last_offset=last)
    offsets = torch.tensor([0, 3, 3, 7] + ([9] if last else []))
    model = FnOf(lambda m, x: m.bag(x, offsets))
    model.bag = bag
    _check(model, [torch.randint(0, 20, (9,))], "nn.EmbeddingBag")


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_padding_idx(mode):
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(20, 8, mode=mode, padding_idx=1)
    x = torch.tensor([[1, 1, 1], [1, 4, 5], [6, 7, 1]])  # an all-padding bag gives zeros
    _check(bag, [x], "nn.EmbeddingBag")


def test_functional_embedding_bag_per_sample_weights():
    torch.manual_seed(0)
    model = FnOf(lambda m, x, w: F.embedding_bag(x, m.table, per_sample_weights=w,
                                                       mode="sum"), table=torch.randn(10, 8))
    _check(model, [torch.randint(0, 10, (3, 4)), torch.randn(3, 4)], "F.embedding_bag")


def test_embedding_bag_dynamic_offsets_refused():
    model = FnOf(lambda m, x, o: m.bag(x, o + 0))
    model.bag = nn.EmbeddingBag(20, 8, mode="sum")
    graph = capture(model.eval(),
                    [torch.randint(0, 20, (6,)), torch.tensor([0, 2, 4])])
    with pytest.raises(UnsupportedOperator, match="offsets"):
        build_model(graph)


# --- Tensor.index_put ---------------------------------------------------------------------------

def test_index_put_negative_indices_rows():
    _check(FnOf(lambda m, x, i, v: x.index_put((i,), v)),
           [torch.randn(6, 4), torch.tensor([0, -1, 2]), torch.randn(3, 4)], "Tensor.index_put")


def test_index_put_accumulate_duplicates():
    _check(FnOf(lambda m, x, i, v: x.index_put((i,), v, accumulate=True)),
           [torch.randn(5, 3), torch.tensor([1, 1, 4, 1]), torch.randn(4, 3)], "Tensor.index_put")


def test_index_put_two_indices_broadcast_value():
    _check(FnOf(lambda m, x, i, j, v: x.index_put((i, j), v)),
           [torch.randn(5, 6, 2), torch.tensor([0, 4, 2]), torch.tensor([5, -2, 1]), torch.randn(2)],
           "Tensor.index_put")


# --- bit shifts ------------------------------------------------------------------------------

_EDGE = {torch.int32: (-2**31, 2**31 - 1), torch.int64: (-2**63, 2**63 - 1)}


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("fn", [torch.bitwise_left_shift, torch.bitwise_right_shift])
def test_signed_shift_edges(dtype, fn):
    lo, hi = _EDGE[dtype]
    bits = 32 if dtype == torch.int32 else 64
    x = torch.tensor([5, -5, 7, -8, 1, -1, lo, hi, -3, 3, lo, -7], dtype=dtype)
    s = torch.tensor([0, 1, bits - 1, bits, -1, 40, 1, 1, 2, bits - 1, bits - 1, 70], dtype=dtype)
    _check(FnOf(lambda m, a, b: fn(a, b)), [x, s], f"torch.{fn.__name__}", atol=0)


@pytest.mark.parametrize("fn", [torch.bitwise_left_shift, torch.bitwise_right_shift])
def test_unsigned_shift(fn):
    x = torch.tensor([200, 3, 255, 1, 128], dtype=torch.uint8)
    s = torch.tensor([1, 8, 9, 7, 0], dtype=torch.uint8)
    _check(FnOf(lambda m, a, b: fn(a, b)), [x, s], f"torch.{fn.__name__}", atol=0)
