"""Attention: F.scaled_dot_product_attention -> one Attention node (opset 23), a 2-D or 3-D
query lifted to 4-D by leading axes of 1, a rank-5+ one folded to 4-D (its leading axes into
the batch, by Reshape, and unfolded after); grouped heads (enable_gqa: query head i reads
key/value head i // (heads / groups)) are Attention's own q_num_heads > kv_num_heads;
nn.MultiheadAttention -> input projections (MatMul/Add) + Attention + output projection
(an unbatched (L, E) as a batch_first batch of one, see unbatched.py)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..attention_blocks import batch_major, in_projection, projection, score_mask, sequence_output
from ..registry import LOWERINGS
from ..unbatched import lower_as_batch_of_one


@LOWERINGS.register("F.scaled_dot_product_attention")
def sdpa(ctx, op):
    if ctx.opset < 23:
        raise Unsupported("Attention needs opset 23")
    if float(op.params.get("dropout_p", 0.0) or 0.0) != 0.0:
        raise Unsupported("dropout_p != 0 is random")
    q, k, v = (op.input(key, i) for i, key in enumerate(("query", "key", "value")))
    mask = op.input("attn_mask", 3)
    if None in (q, k, v) or len({ctx.rank(q), ctx.rank(k), ctx.rank(v), ctx.rank(op.outputs[0])}) != 1:
        raise Unsupported("needs query, key, value and output of one rank")
    if ctx.rank(q) in (2, 3) and (mask is None or ctx.rank(mask) <= ctx.rank(q)):
        # leading axes are batch axes: (L, E) and (heads, L, E) get batch axes of 1 until 4-D
        lower_as_batch_of_one(ctx, op, sdpa, batched_inputs=4)
        return
    if ctx.rank(q) > 4:
        _folded(ctx, op, q, k, v, mask)
        return
    if ctx.rank(q) != 4:
        raise Unsupported("needs 2-D or wider query, key and value operands")
    _attention(ctx, op, [q.name, k.name, v.name] + ([_rows_of(ctx, mask, q)] if mask is not None else []), ctx.y(op))


def _attention(ctx, op, inputs: list[str], out) -> str:
    scale = op.params.get("scale")
    return ctx.node("Attention", inputs, out, is_causal=int(bool(op.params.get("is_causal"))),
                  scale=None if scale is None else float(scale))


def _folded(ctx, op, q, k, v, mask) -> None:
    """(A, B, ..., heads, L, E) as (A*B*..., heads, L, E): Reshape, Attention, Reshape back. The
    leading axes of query, key and value must agree (torch broadcasts them; this does not)."""
    lead = ctx.shape(q)[:-3]
    if any(ctx.shape(x)[:-3] != lead for x in (k, v)) or min(lead) < 1:
        raise Unsupported("query, key and value leading axes differ or are unknown: not folded")
    if mask is not None and ctx.rank(mask) > 2:
        raise Unsupported("a mask with leading axes over a rank-5+ attention is not folded")
    folded = [ctx.node("Reshape", [x.name, ctx.const([-1] + ctx.shape(x)[-3:], hint="shape")]) for x in (q, k, v)]
    att = _attention(ctx, op, folded + ([_rows_of(ctx, mask, q)] if mask is not None else []), 1)
    ctx.node("Reshape", [att, ctx.const(ctx.shape(op.outputs[0]), hint="shape")], ctx.y(op))


def _rows_of(ctx, mask, q) -> str:
    """A mask with one row for every query (a key padding mask (N, 1, 1, S)), expanded to the
    query rows: onnxruntime's Attention does not broadcast it over them."""
    shape, rows = ctx.shape(mask), ctx.shape(q)[-2]
    if ctx.rank(mask) < 2 or shape[-2] != 1 or rows == 1:
        return mask.name
    if rows < 1:
        raise Unsupported("a mask broadcast over a query of unknown length")
    return ctx.node("Expand", [mask.name, ctx.const([1] * (len(shape) - 2) + [rows, shape[-1]], hint="shape")])


@LOWERINGS.register("nn.MultiheadAttention", unbatched_rank=2, batched_inputs=3,
                    unbatched_params={"batch_first": True})
def multihead_attention(ctx, op):
    p = op.params
    e, heads = int(p["embed_dim"]), int(p["num_heads"])
    if ctx.opset < 23:
        raise Unsupported("Attention needs opset 23")
    masks = [op.input(name) for name in ("attn_mask", "key_padding_mask")]
    if len(op.inputs) > 3 and len(op.inputs) - 3 != sum(m is not None for m in masks):
        raise Unsupported("attention masks given by position")
    if ctx.rank(op.inputs[0]) != 3:
        raise Unsupported(f"input of rank {ctx.rank(op.inputs[0])} (expected 2 or 3)")
    names = [o.name for o in op.inputs[:3]] if len(op.inputs) >= 3 else [ctx.x(op)] * 3
    mask = score_mask(ctx, *masks, op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else op.inputs[0],
                      bool(p.get("batch_first")))
    major = batch_major(ctx, op, names)
    q, k, v = (in_projection(ctx, op, major, "", e) if "in_proj_weight" in op.attrs
               else _separate_projections(ctx, op, major))
    rows = _appended_rows(ctx, op, e)
    if rows:  # torch appends them to every projected key/value sequence, and a column to the masks
        batch = ctx.shape(op.inputs[0])[0 if p.get("batch_first") else 1]
        k, v = (ctx.node("Concat", [x] + [_per_sequence(ctx, x, r, e, batch) for r in part], axis=1)
                for x, part in zip((k, v), rows))
        if mask is not None:
            mask = ctx.node("Pad", [mask, ctx.const([0] * 7 + [len(rows[0])], hint="pads")])
    inputs = [q, k, v] + ([mask] if mask is not None else [])
    weights = op.outputs[1] if len(op.outputs) > 1 and op.outputs[1].consumers else None
    if weights is None:
        att = ctx.node("Attention", inputs, q_num_heads=heads, kv_num_heads=heads)
    else:  # the softmax output (B, heads, L, S), averaged over heads unless it is 4-D
        att, probs = ctx.fresh(f"{op.name}_att"), ctx.fresh(f"{op.name}_probs")
        ctx.node("Attention", inputs, [att, "", "", probs], q_num_heads=heads,
               kv_num_heads=heads, qk_matmul_output_mode=3)
        if ctx.rank(weights) == 4:
            ctx.node("Identity", [probs], weights.name)
        else:
            ctx.node("ReduceMean", [probs, ctx.const([1], hint="axes")], weights.name, keepdims=0)
    sequence_output(ctx, op, projection(ctx, op, att, "out_proj."))


def _separate_projections(ctx, op, names: list[str]) -> list[str]:
    """Q, K, V projections with their own weights (kdim / vdim differ from embed_dim)."""
    e = int(op.params["embed_dim"])
    bias = ctx.attr(op, "in_proj_bias") if "in_proj_bias" in op.attrs else None
    out = []
    for i, (name, key) in enumerate(zip(names, "qkv")):
        y = ctx.node("MatMul", [name, ctx.weight(ctx.attr(op, f"{key}_proj_weight").T, f"{op.name}.{key}_proj_weight")])
        if bias is not None:
            y = ctx.node("Add", [y, ctx.weight(bias[i * e:(i + 1) * e], f"{op.name}.b{key}")])
        out.append(y)
    return out


def _appended_rows(ctx, op, e: int) -> list[list[str]] | None:
    """[key rows, value rows] torch appends: bias_k / bias_v (add_bias_kv), then zeros
    (add_zero_attn), each a (1, 1, E) constant; None when neither."""
    keys, values = [], []
    if op.params.get("add_bias_kv"):
        keys.append(ctx.attr_weight(op, "bias_k"))
        values.append(ctx.attr_weight(op, "bias_v"))
    if op.params.get("add_zero_attn"):
        zero = ctx.weight(np.zeros((1, 1, e), np.float32), f"{op.name}.zero_attn")
        keys.append(zero)
        values.append(zero)
    return [keys, values] if keys else None


def _per_sequence(ctx, x: str, row: str, e: int, batch: int) -> str:
    """A (1, 1, E) row expanded to (B, 1, E); B read from x at run time when not known (a
    constant shape lets the checker infer the attention weights' columns)."""
    if batch > 0:
        return ctx.node("Expand", [row, ctx.const([batch, 1, e], hint="shape")])
    size = ctx.node("Shape", [x], start=0, end=1)
    return ctx.node("Expand", [row, ctx.node("Concat", [size, ctx.const([1, e], hint="shape")], axis=0)])
