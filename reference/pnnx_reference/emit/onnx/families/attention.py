"""Attention: F.scaled_dot_product_attention -> one Attention node (opset 23), a 2-D or 3-D
query lifted to 4-D by leading axes of 1, a rank-5+ one folded to 4-D (its leading axes into
the batch, by Reshape, and unfolded after); grouped heads (enable_gqa: query head i reads
key/value head i // (heads / groups)) are Attention's own q_num_heads > kv_num_heads;
nn.MultiheadAttention -> input projections (MatMul/Add) + Attention + output projection
(an unbatched (L, E) as a batch_first batch of one, see unbatched.py)."""
from __future__ import annotations

from ....errors import Unsupported
from ..attention_blocks import batch_major, in_projection, projection, score_mask, sequence_output
from ..registry import LOWERINGS
from ..unbatched import lower_as_batch_of_one


@LOWERINGS.register("F.scaled_dot_product_attention")
def sdpa(b, op):
    if b.opset < 23:
        raise Unsupported("Attention needs opset 23")
    if float(op.params.get("dropout_p", 0.0) or 0.0) != 0.0:
        raise Unsupported("dropout_p != 0 is random")
    q, k, v = (op.input(key, i) for i, key in enumerate(("query", "key", "value")))
    mask = op.input("attn_mask", 3)
    if None in (q, k, v) or len({b.rank(q), b.rank(k), b.rank(v), b.rank(op.outputs[0])}) != 1:
        raise Unsupported("needs query, key, value and output of one rank")
    if b.rank(q) in (2, 3) and (mask is None or b.rank(mask) <= b.rank(q)):
        # leading axes are batch axes: (L, E) and (heads, L, E) get batch axes of 1 until 4-D
        lower_as_batch_of_one(b, op, sdpa, batched_inputs=4)
        return
    if b.rank(q) > 4:
        _folded(b, op, q, k, v, mask)
        return
    if b.rank(q) != 4:
        raise Unsupported("needs 2-D or wider query, key and value operands")
    _attention(b, op, [q.name, k.name, v.name] + ([_rows_of(b, mask, q)] if mask is not None else []), b.y(op))


def _attention(b, op, inputs: list[str], out) -> str:
    scale = op.params.get("scale")
    return b.node("Attention", inputs, out, is_causal=int(bool(op.params.get("is_causal"))),
                  scale=None if scale is None else float(scale))


def _folded(b, op, q, k, v, mask) -> None:
    """(A, B, ..., heads, L, E) as (A*B*..., heads, L, E): Reshape, Attention, Reshape back. The
    leading axes of query, key and value must agree (torch broadcasts them; this does not)."""
    lead = b.shape(q)[:-3]
    if any(b.shape(x)[:-3] != lead for x in (k, v)) or min(lead) < 1:
        raise Unsupported("query, key and value leading axes differ or are unknown: not folded")
    if mask is not None and b.rank(mask) > 2:
        raise Unsupported("a mask with leading axes over a rank-5+ attention is not folded")
    folded = [b.node("Reshape", [x.name, b.const([-1] + b.shape(x)[-3:], hint="shape")]) for x in (q, k, v)]
    att = _attention(b, op, folded + ([_rows_of(b, mask, q)] if mask is not None else []), 1)
    b.node("Reshape", [att, b.const(b.shape(op.outputs[0]), hint="shape")], b.y(op))


def _rows_of(b, mask, q) -> str:
    """A mask with one row for every query (a key padding mask (N, 1, 1, S)), expanded to the
    query rows: onnxruntime's Attention does not broadcast it over them."""
    shape, rows = b.shape(mask), b.shape(q)[-2]
    if b.rank(mask) < 2 or shape[-2] != 1 or rows == 1:
        return mask.name
    if rows < 1:
        raise Unsupported("a mask broadcast over a query of unknown length")
    return b.node("Expand", [mask.name, b.const([1] * (len(shape) - 2) + [rows, shape[-1]], hint="shape")])


@LOWERINGS.register("nn.MultiheadAttention", unbatched_rank=2, batched_inputs=3,
                    unbatched_params={"batch_first": True})
def multihead_attention(b, op):
    p = op.params
    e, heads = int(p["embed_dim"]), int(p["num_heads"])
    if b.opset < 23:
        raise Unsupported("Attention needs opset 23")
    if p.get("add_bias_kv") or p.get("add_zero_attn") or "in_proj_weight" not in op.attrs:
        raise Unsupported("add_bias_kv, add_zero_attn or separate kdim/vdim projections")
    masks = [op.input(name) for name in ("attn_mask", "key_padding_mask")]
    if len(op.inputs) > 3 and len(op.inputs) - 3 != sum(m is not None for m in masks):
        raise Unsupported("attention masks given by position")
    if b.rank(op.inputs[0]) != 3:
        raise Unsupported(f"input of rank {b.rank(op.inputs[0])} (expected 2 or 3)")
    names = [o.name for o in op.inputs[:3]] if len(op.inputs) >= 3 else [b.x(op)] * 3
    mask = score_mask(b, *masks, op.inputs[0], op.inputs[1] if len(op.inputs) > 1 else op.inputs[0],
                      bool(p.get("batch_first")))
    q, k, v = in_projection(b, op, batch_major(b, op, names), "", e)
    inputs = [q, k, v] + ([mask] if mask is not None else [])
    weights = op.outputs[1] if len(op.outputs) > 1 and op.outputs[1].consumers else None
    if weights is None:
        att = b.node("Attention", inputs, q_num_heads=heads, kv_num_heads=heads)
    else:  # the softmax output (B, heads, L, S), averaged over heads unless it is 4-D
        att, probs = b.fresh(f"{op.name}_att"), b.fresh(f"{op.name}_probs")
        b.node("Attention", inputs, [att, "", "", probs], q_num_heads=heads,
               kv_num_heads=heads, qk_matmul_output_mode=3)
        if b.rank(weights) == 4:
            b.node("Identity", [probs], weights.name)
        else:
            b.node("ReduceMean", [probs, b.const([1], hint="axes")], weights.name, keepdims=0)
    sequence_output(b, op, projection(b, op, att, "out_proj."))
