"""nn.TransformerDecoderLayer -> self-attention, cross-attention on memory and feed-forward
blocks with residuals and LayerNorms; nn.Transformer -> its encoder layers, encoder norm,
decoder layers and decoder norm. Built from the encoder-layer pieces of the attention family."""
from __future__ import annotations

from ..registry import Unsupported, lowering
from .attention import LayerParts, _finish, _seq_major


def _decoder_layer(parts: LayerParts, x: str, memory: str) -> str:
    x = parts.residual(x, lambda h: parts.attention(h, h, "self_attn"), "norm1")
    x = parts.residual(x, lambda h: parts.attention(h, memory, "multihead_attn"), "norm2")
    return parts.residual(x, parts.feed_forward, "norm3")


@lowering("nn.TransformerDecoderLayer")
def transformer_decoder_layer(b, op):
    if len(op.inputs) != 2:
        raise Unsupported("attention masks")
    parts = LayerParts(b, op)
    x, memory = _seq_major(b, op, [op.inputs[0].name, op.inputs[1].name])
    _finish(b, op, _decoder_layer(parts, x, memory))


@lowering("nn.Transformer")
def transformer(b, op):
    if len(op.inputs) != 2:
        raise Unsupported("attention masks")
    if b.rank(op.inputs[1]) != 3:
        raise Unsupported("unbatched input")
    parts = LayerParts(b, op)
    src, tgt = _seq_major(b, op, [op.inputs[0].name, op.inputs[1].name])
    memory = src
    for i in range(int(op.params.get("num_encoder_layers", 6))):
        memory = parts.at(f"encoder.layers.{i}.").encoder_layer(memory)
    memory = parts.at("encoder.").norm(memory, "norm")
    x = tgt
    for i in range(int(op.params.get("num_decoder_layers", 6))):
        x = _decoder_layer(parts.at(f"decoder.layers.{i}."), x, memory)
    _finish(b, op, parts.at("decoder.").norm(x, "norm"))
