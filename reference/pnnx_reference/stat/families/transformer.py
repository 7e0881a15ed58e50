"""Transformer layers, counted as the parts upstream's own counts add up to: attention(s),
the feed-forward pair of linear layers and its activation, a layer norm and a residual add
after each block."""
from __future__ import annotations

from .. import blocks
from ..registry import Count, numel, outputs, rule

_ACTIVATIONS = {"relu": 1, "gelu": 10}


def _layer(op, x_shape, memory_shape=None) -> Count:
    """One encoder layer (memory_shape None) or decoder layer over `x_shape`."""
    embed, heads = int(op.params["d_model"]), int(op.params["nhead"])
    feedforward, bias = int(op.params["dim_feedforward"]), op.params.get("bias") is not False
    batch_first = op.params.get("batch_first") is True
    unbatched = len(x_shape) == 2
    length = x_shape[0] if unbatched or not batch_first else x_shape[1]
    batch = 1 if unbatched else (x_shape[0] if batch_first else x_shape[1])
    rows = batch * length
    elements = rows * embed
    parts = [_attention(batch, length, length, embed, heads, bias)]
    if memory_shape is not None:
        source = memory_shape[0] if len(memory_shape) == 2 or not batch_first else memory_shape[1]
        parts.append(_attention(batch, length, source, embed, heads, bias, source_elements=batch * source * embed))
    activation = _ACTIVATIONS.get(str(op.params.get("activation", "relu")), 1)
    parts += [blocks.linear(rows, embed, feedforward, bias), blocks.elementwise(rows * feedforward, activation, 1),
              blocks.linear(rows, feedforward, embed, bias)]
    parts += [blocks.layer_norm(elements, embed), blocks.elementwise(elements, 1, 2)] * (len(parts) - 2)
    return blocks.total(*parts)


def _attention(batch, length, source, embed, heads, bias, source_elements=None) -> Count:
    inner = blocks.attention(batch, length, source, embed, heads, embed, embed, bias)
    query = batch * length * embed
    keys = query if source_elements is None else source_elements
    return Count(inner.flops, inner.memory + query + 2 * keys + query)


@rule("nn.TransformerEncoderLayer")
def _encoder_layer(op) -> Count:
    return _layer(op, op.inputs[0].shape)


@rule("nn.TransformerDecoderLayer")
def _decoder_layer(op) -> Count:
    return _layer(op, op.inputs[0].shape, op.inputs[1].shape)


@rule("nn.Transformer")
def _transformer(op) -> Count:
    """Every encoder layer, the encoder's norm, every decoder layer, the decoder's norm."""
    source, target = op.inputs[0].shape, op.inputs[1].shape
    embed = int(op.params["d_model"])
    encoder = [_layer(op, source)] * int(op.params.get("num_encoder_layers", 6))
    decoder = [_layer(op, target, source)] * int(op.params.get("num_decoder_layers", 6))
    norms = [blocks.layer_norm(numel(op.inputs[0]), embed), blocks.layer_norm(outputs(op), embed)]
    return blocks.total(*encoder, *decoder, *norms)
