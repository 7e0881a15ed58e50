"""nn.MultiheadAttention (batch_first, batch 1) -> MultiHeadAttention: per projection a
tagged weight then an untagged bias (q, k, v, out); 6=scale."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, param
from .layers import Weight
from .registry import lowers


def _projections(op, embed: int):
    """q, k, v weights (out rows first) and biases, from the packed or the separate form."""
    if "in_proj_weight" in op.attrs:
        w = op.attrs["in_proj_weight"].to_numpy().astype(np.float32)
        weights = [w[:embed], w[embed:2 * embed], w[2 * embed:]]
    else:
        weights = [op.attrs[f"{k}_proj_weight"].to_numpy().astype(np.float32) for k in "qkv"]
    if "in_proj_bias" in op.attrs:
        b = op.attrs["in_proj_bias"].to_numpy().astype(np.float32)
        biases = [b[:embed], b[embed:2 * embed], b[2 * embed:]]
    else:
        biases = [np.zeros(embed, np.float32)] * 3
    return weights, biases


def _check(ctx: Context, op) -> None:
    if not param(op, "batch_first", False):
        raise CannotLower("batch_first=False puts the sequence on dim 0, where ncnn expects the batch")
    if param(op, "add_bias_kv", False) or param(op, "add_zero_attn", False):
        raise CannotLower("add_bias_kv / add_zero_attn have no ncnn equivalent")
    if len(op.inputs) > 3:
        raise CannotLower("attention masks are not lowered")
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise CannotLower("the attention weights output is used: ncnn returns only the result")
    if any(ctx.rank(x) != 2 for x in op.inputs):
        raise CannotLower("expects (1, L, E) query/key/value")


@lowers("nn.MultiheadAttention")
def multihead_attention(ctx: Context, op) -> None:
    _check(ctx, op)
    embed, heads = int(param(op, "embed_dim")), int(param(op, "num_heads"))
    weights, biases = _projections(op, embed)
    out_w = op.attrs["out_proj.weight"].to_numpy().astype(np.float32)
    out_b = op.attrs["out_proj.bias"].to_numpy().astype(np.float32) if "out_proj.bias" in op.attrs \
        else np.zeros(embed, np.float32)
    blobs = []
    for w, b in zip(weights + [out_w], biases + [out_b]):
        blobs += [Weight(w.reshape(-1), tagged=True), Weight(b.reshape(-1), tagged=False)]
    q, k, v = op.inputs[:3]
    inputs = [q] if q is k is v else [q, k] if k is v else [q, k, v]
    p = {0: embed, 1: heads, 2: embed * embed, 3: int(weights[1].shape[1]), 4: int(weights[2].shape[1]),
         6: 1.0 / math.sqrt(embed // heads)}
    ctx.emit("MultiHeadAttention", "attention", [ctx.blob(x) for x in inputs], [op.outputs[0].name], p, blobs)
