"""Attention: the two products, the softmax (5 per score) and the mask, per head; the score
matrix is written once."""
from __future__ import annotations

import math

from .. import blocks
from ..registry import Count, moved, numel, outputs, rule


@rule("F.scaled_dot_product_attention")
def _sdpa(op) -> Count:
    query, key, value = (o.shape for o in op.inputs[:3])
    heads = math.prod(query[:-2])
    length, source, depth, value_depth = query[-2], key[-2], query[-1], value[-1]
    scores = length * source
    masked = op.params.get("is_causal") is True or len(op.inputs) > 3
    flops = heads * (2 * scores * depth + 5 * scores + 2 * scores * value_depth + masked * scores)
    return Count(flops, moved(op) + heads * scores)


def _qkv(op):
    """query, key, value operands; self-attention passes one tensor for all three."""
    tensors = [o for o, name in zip(op.inputs, op.inputnames or [""] * len(op.inputs))
               if name not in ("attn_mask", "key_padding_mask")]
    query = tensors[0]
    key = tensors[1] if len(tensors) > 1 else query
    return query, key, tensors[2] if len(tensors) > 2 else key


@rule("nn.MultiheadAttention")
def _multihead_attention(op) -> Count:
    """The projections, products, softmax and mask (blocks.attention); query, key and value
    are each read (even when one tensor), masks read, outputs written. add_bias_kv and
    add_zero_attn attend to one more position."""
    query, key, value = _qkv(op)
    embed, heads = int(op.params["embed_dim"]), int(op.params["num_heads"])
    batch_first = op.params.get("batch_first") is True
    q, k = query.shape, key.shape
    length, source = (q[-2], k[-2]) if batch_first or len(q) == 2 else (q[0], k[0])
    batch = 1 if len(q) == 2 else (q[0] if batch_first else q[1])
    extra = (op.params.get("add_bias_kv") is True) + (op.params.get("add_zero_attn") is True)
    inner = blocks.attention(batch, length, source, embed, heads, int(op.params.get("kdim", embed)),
                             int(op.params.get("vdim", embed)), op.params.get("bias") is not False, extra,
                             "attn_mask" in op.inputnames)
    masks = sum(numel(o) for o in op.inputs if o not in (query, key, value))
    read = numel(query) + numel(key) + numel(value) + masks
    bias_kv = sum(numel_of(a) for name, a in op.attrs.items() if name in ("bias_k", "bias_v"))
    return Count(inner.flops, inner.memory + read + outputs(op) + bias_kv)


def numel_of(attribute) -> int:
    return math.prod(attribute.shape)
