"""Transformer layers (ONNX has no layer operators): nn.TransformerEncoderLayer ->
self-attention and feed-forward blocks with residuals and LayerNormalization, in torch's
order (norm_first or not); nn.TransformerDecoderLayer adds cross-attention on memory;
nn.Transformer -> its encoder layers, encoder norm, decoder layers and decoder norm.
Unbatched (S, E) input is a batch_first batch of one (unbatched.py)."""
from __future__ import annotations

import copy

import numpy as np

from ....errors import Unsupported
from ..attention_blocks import batch_major, in_projection, projection, score_mask, sequence_output
from ..dtypes import numpy_type
from ..registry import LOWERINGS

_ACTIVATIONS = {"relu": "Relu", "gelu": "Gelu"}
UNBATCHED = {"batch_first": True}  # torch: an unbatched (S, E) is a batch_first batch of one


class LayerParts:
    """The blocks of a Transformer*Layer whose weights sit under `prefix` in op.attrs."""

    def __init__(self, ctx, op, prefix: str = "") -> None:
        p = op.params
        self.act = _ACTIVATIONS.get(p.get("activation", "relu"))
        if self.act is None or ctx.opset < 23 or ctx.rank(op.inputs[0]) != 3:
            raise Unsupported("needs relu/gelu, (S, E) or 3-D input and opset >= 23")
        self.ctx, self.op, self.prefix = ctx, op, prefix
        self.e, self.heads = int(p["d_model"]), int(p["nhead"])
        self.eps = float(p.get("layer_norm_eps", 1e-5))
        self.norm_first = bool(p.get("norm_first"))

    def at(self, prefix: str) -> "LayerParts":
        """The same settings for the layer whose weights sit under `prefix`."""
        parts = copy.copy(self)
        parts.prefix = prefix
        return parts

    def norm(self, x: str, key: str) -> str:
        ctx, op, key = self.ctx, self.op, f"{self.prefix}{key}"
        dtype = ctx.dtype(op.inputs[0])
        bias = ctx.attr_weight(op, f"{key}.bias") if f"{key}.bias" in op.attrs else \
            ctx.const(np.zeros(self.e, numpy_type(dtype)), dtype, "zeros")
        return ctx.node("LayerNormalization", [x, ctx.attr_weight(op, f"{key}.weight"), bias],
                      axis=-1, epsilon=self.eps)

    def attention(self, x: str, memory: str, key: str, mask: str | None = None) -> str:
        """Multi-head attention of x over memory (x itself for self-attention); `mask`: added
        to the scores (attention_blocks.score_mask)."""
        prefix = f"{self.prefix}{key}."
        q, k, v = in_projection(self.ctx, self.op, [x, memory, memory], prefix, self.e)
        att = self.ctx.node("Attention", [q, k, v] + ([mask] if mask is not None else []),
                          q_num_heads=self.heads, kv_num_heads=self.heads)
        return projection(self.ctx, self.op, att, f"{prefix}out_proj.")

    def feed_forward(self, x: str) -> str:
        hidden = self.ctx.node(self.act, [projection(self.ctx, self.op, x, f"{self.prefix}linear1.")])
        return projection(self.ctx, self.op, hidden, f"{self.prefix}linear2.")

    def residual(self, x: str, block, norm_key: str) -> str:
        """x + block(norm(x)) when norm_first, else norm(x + block(x))."""
        if self.norm_first:
            return self.ctx.node("Add", [x, block(self.norm(x, norm_key))])
        return self.norm(self.ctx.node("Add", [x, block(x)]), norm_key)

    def encoder_layer(self, x: str, mask: str | None = None) -> str:
        x = self.residual(x, lambda h: self.attention(h, h, "self_attn", mask), "norm1")
        return self.residual(x, self.feed_forward, "norm2")


# each layer's sequences, then its (attn_mask, key_padding_mask) pairs: (queries, keys) they mask
_LAYER_MASKS = {
    "nn.TransformerEncoderLayer": (("src",), {"self": ("src_mask", "src_key_padding_mask", "src", "src")}),
    "nn.TransformerDecoderLayer": (("tgt", "memory"), {
        "self": ("tgt_mask", "tgt_key_padding_mask", "tgt", "tgt"),
        "cross": ("memory_mask", "memory_key_padding_mask", "tgt", "memory")}),
}


def layer_masks(ctx, op) -> dict[str, str | None]:
    """Per attention (self, cross): the score mask its masks make (score_mask), by keyword."""
    sequences, attentions = _LAYER_MASKS[op.type]
    inputs = {name: op.input(name, i) for i, name in enumerate(sequences)}
    masks = [name for pair in attentions.values() for name in pair[:2] if op.input(name) is not None]
    if len(op.inputs) != len(sequences) + len(masks):
        raise Unsupported("attention masks given by position")
    if any(flag for flag in ("is_causal", "tgt_is_causal") if op.params.get(flag)) and not masks:
        raise Unsupported("is_causal without a mask")
    batch_first = bool(op.params.get("batch_first"))
    return {which: score_mask(ctx, op.input(mask), op.input(padding), inputs[query], inputs[key], batch_first)
            for which, (mask, padding, query, key) in attentions.items()}


@LOWERINGS.register("nn.TransformerEncoderLayer", unbatched_rank=2, batched_inputs=1,
                    unbatched_params=UNBATCHED)
def transformer_encoder_layer(ctx, op):
    """Self-attention block and feed-forward block with residuals and LayerNorms, in
    torch's order (norm_first or not); ONNX has no encoder-layer operator."""
    parts = LayerParts(ctx, op)
    masks = layer_masks(ctx, op)
    sequence_output(ctx, op, parts.encoder_layer(batch_major(ctx, op, [ctx.x(op)])[0], masks["self"]))


def _decoder_layer(parts: LayerParts, x: str, memory: str, masks: dict | None = None) -> str:
    masks = masks or {}
    x = parts.residual(x, lambda h: parts.attention(h, h, "self_attn", masks.get("self")), "norm1")
    x = parts.residual(x, lambda h: parts.attention(h, memory, "multihead_attn", masks.get("cross")), "norm2")
    return parts.residual(x, parts.feed_forward, "norm3")


@LOWERINGS.register("nn.TransformerDecoderLayer", unbatched_rank=2, batched_inputs=2,
                    unbatched_params=UNBATCHED)
def transformer_decoder_layer(ctx, op):
    parts = LayerParts(ctx, op)
    masks = layer_masks(ctx, op)
    x, memory = batch_major(ctx, op, [op.inputs[0].name, op.inputs[1].name])
    sequence_output(ctx, op, _decoder_layer(parts, x, memory, masks))


@LOWERINGS.register("nn.Transformer", unbatched_rank=2, batched_inputs=2,
                    unbatched_params=UNBATCHED)
def transformer(ctx, op):
    if len(op.inputs) != 2:
        raise Unsupported("attention masks")
    parts = LayerParts(ctx, op)
    src, tgt = batch_major(ctx, op, [op.inputs[0].name, op.inputs[1].name])
    memory = src
    for i in range(int(op.params.get("num_encoder_layers", 6))):
        memory = parts.at(f"encoder.layers.{i}.").encoder_layer(memory)
    memory = parts.at("encoder.").norm(memory, "norm")
    x = tgt
    for i in range(int(op.params.get("num_decoder_layers", 6))):
        x = _decoder_layer(parts.at(f"decoder.layers.{i}."), x, memory)
    sequence_output(ctx, op, parts.at("decoder.").norm(x, "norm"))
