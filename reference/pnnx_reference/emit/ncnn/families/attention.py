"""Attention layers.

nn.MultiheadAttention (batch_first, batch 1) -> MultiHeadAttention: per projection a tagged
weight then an untagged bias (q, k, v, out); 6=scale.

F.scaled_dot_product_attention -> SDPA: (heads, L, E) query, (groups, S, E) key,
(groups, S, Ev) value, heads a multiple of groups (grouped-query attention repeats each kv
head over consecutive query heads, as enable_gqa does). 5=attn_mask (a float blob added to
the scores: (L, S) or (1 or heads, L, S)), 6=scale (0: 1/sqrt(E)). is_causal becomes a
constant mask. Any leading axis of a batchless graph plays the heads' part, so the lowering
follows the operand shapes only."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..context import FLT_MAX, Context, dims_params, param, required_inputs
from ..layers import Weight
from ..registry import LOWERINGS


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


def _check_multihead(ctx: Context, op) -> None:
    if not param(op, "batch_first", False):
        raise Unsupported("batch_first=False puts the sequence on dim 0, where ncnn expects the batch")
    if param(op, "add_bias_kv", False) or param(op, "add_zero_attn", False):
        raise Unsupported("add_bias_kv / add_zero_attn have no ncnn equivalent")
    if len(op.inputs) > 3:
        raise Unsupported("attention masks are not lowered")
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise Unsupported("the attention weights output is used: ncnn returns only the result")
    if any(ctx.rank(x) != 2 for x in op.inputs):
        raise Unsupported("expects (1, L, E) query/key/value")


@LOWERINGS.register("nn.MultiheadAttention")
def multihead_attention(ctx: Context, op) -> None:
    _check_multihead(ctx, op)
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


def _check_sdpa(ctx: Context, op, q, k, v) -> None:
    if float(param(op, "dropout_p", 0.0) or 0.0) != 0.0:
        raise Unsupported("dropout_p > 0 is random: ncnn SDPA has no dropout")
    shapes = [ctx.shape(x) for x in (q, k, v)]
    if any(len(s) != len(shapes[0]) or len(s) not in (2, 3) for s in shapes):
        raise Unsupported("ncnn SDPA takes (L, E) or (heads, L, E) blobs: query/key/value of "
                          f"shapes {[tuple(ctx.torch_shape(x)) for x in (q, k, v)]} are not lowered")
    (lq, eq), (sk, ek), (sv, _) = (s[-2:] for s in shapes)
    heads, groups = shapes[0][0] if len(shapes[0]) == 3 else 1, shapes[1][0] if len(shapes[1]) == 3 else 1
    if ek != eq or sk != sv or (len(shapes[2]) == 3 and shapes[2][0] != groups):
        raise Unsupported("query/key/value shapes do not match")
    if heads != groups and (not param(op, "enable_gqa", False) or heads % groups):
        raise Unsupported(f"{heads} query heads over {groups} key/value heads need enable_gqa=True")


def _mask(ctx: Context, op, q, k, mask) -> str | None:
    """The blob added to the scores, or None."""
    lq, sk = ctx.shape(q)[-2], ctx.shape(k)[-2]
    if param(op, "is_causal", False):
        if mask is not None:
            raise Unsupported("is_causal with attn_mask")
        return _causal_mask(ctx, op, lq, sk)
    if mask is None:
        return None
    shape, heads = ctx.shape(mask), ctx.shape(q)[0] if ctx.rank(q) == 3 else 1
    if shape[-2:] != [lq, sk] or len(shape) > 3 or (len(shape) == 3 and shape[0] not in (1, heads)):
        raise Unsupported(f"attn_mask {tuple(ctx.torch_shape(mask))} must be (L, S) or (1 or heads, L, S) "
                          "per batch: ncnn SDPA does not broadcast it further")
    return ctx.blob(mask)


def _causal_mask(ctx: Context, op, lq: int, sk: int) -> str:
    """torch's causal mask is tril(ones(L, S)): query i sees keys 0..i."""
    data = np.where(np.tril(np.ones((lq, sk), bool)), 0.0, -FLT_MAX).astype(np.float32)
    name = ctx.temp(op.outputs[0].name)
    ctx.emit("MemoryData", "causal_mask", [], [name], dims_params([lq, sk]), [Weight(data.reshape(-1), tagged=False)])
    return name


@LOWERINGS.register("F.scaled_dot_product_attention", batchless=True)
def scaled_dot_product_attention(ctx: Context, op) -> None:
    q, k, v = required_inputs(op, "query", "key", "value")
    mask = op.input("attn_mask", 3)
    _check_sdpa(ctx, op, q, k, v)
    mask_blob = _mask(ctx, op, q, k, mask)
    inputs = [ctx.blob(x) for x in (q, k, v)] + ([mask_blob] if mask_blob else [])
    p = {5: int(mask_blob is not None)}
    scale = param(op, "scale")
    if scale is not None:
        p[6] = float(scale)
    out = op.outputs[0].name
    if ctx.rank(q) == 3:
        ctx.emit("SDPA", "sdpa", inputs, [out], p)
        return
    # SDPA always writes (heads, L, Ev): a single-head result is reshaped back to (L, Ev)
    heads = ctx.temp(out)
    ctx.emit("SDPA", "sdpa", inputs, [heads], p)
    ctx.emit("Reshape", "reshape", [heads], [out], dims_params(ctx.shape(op.outputs[0])))
