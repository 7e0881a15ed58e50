"""Attention: F.scaled_dot_product_attention -> one Attention node (opset 23);
nn.MultiheadAttention -> input projections (MatMul/Add) + Attention + output projection."""
from __future__ import annotations


from ..registry import Unsupported, lowering


@lowering("F.scaled_dot_product_attention")
def sdpa(b, op):
    if b.opset < 23:
        raise Unsupported("Attention needs opset 23")
    if float(op.params.get("dropout_p", 0.0) or 0.0) != 0.0 or op.params.get("enable_gqa"):
        raise Unsupported("dropout_p != 0 or enable_gqa")
    q, k, v = (b.named_input(op, key, i) for i, key in enumerate(("query", "key", "value")))
    if None in (q, k, v) or b.rank(q) != 4:
        raise Unsupported("needs 4-D query, key and value operands")
    mask = b.named_input(op, "attn_mask", 3)
    inputs = [q.name, k.name, v.name] + ([mask.name] if mask is not None else [])
    scale = op.params.get("scale")
    b.node("Attention", inputs, b.y(op), is_causal=int(bool(op.params.get("is_causal"))),
           scale=None if scale is None else float(scale))


def _projections(b, op, e: int) -> list[str]:
    """Q, K, V projections in batch-major layout (B, S, E)."""
    names = [o.name for o in op.inputs[:3]] if len(op.inputs) >= 3 else [b.x(op)] * 3
    if not op.params.get("batch_first"):
        cache = {}
        names = [cache.setdefault(n, b.node("Transpose", [n], perm=[1, 0, 2])) for n in names]
    weight = b.attr(op, "in_proj_weight")
    bias = b.attr(op, "in_proj_bias") if "in_proj_bias" in op.attrs else None
    if names[0] == names[1] == names[2]:  # self-attention: one packed projection, then Split
        packed = b.node("MatMul", [names[0], b.weight(weight.T.copy(), f"{op.name}.in_proj_weight")])
        if bias is not None:
            packed = b.node("Add", [packed, b.weight(bias, f"{op.name}.in_proj_bias")])
        return b.node("Split", [packed], 3, axis=2, num_outputs=3)
    out = []
    for i, name in enumerate(names):
        rows = slice(i * e, (i + 1) * e)
        p = b.node("MatMul", [name, b.weight(weight[rows].T.copy(), f"{op.name}.w{'qkv'[i]}")])
        if bias is not None:
            p = b.node("Add", [p, b.weight(bias[rows], f"{op.name}.b{'qkv'[i]}")])
        out.append(p)
    return out


@lowering("nn.MultiheadAttention")
def multihead_attention(b, op):
    p = op.params
    e, heads = int(p["embed_dim"]), int(p["num_heads"])
    if b.opset < 23:
        raise Unsupported("Attention needs opset 23")
    if p.get("add_bias_kv") or p.get("add_zero_attn") or "in_proj_weight" not in op.attrs:
        raise Unsupported("add_bias_kv, add_zero_attn or separate kdim/vdim projections")
    if len(op.inputs) > 3:
        raise Unsupported("attention masks")
    if b.rank(op.inputs[0]) != 3:
        raise Unsupported("unbatched input")
    q, k, v = _projections(b, op, e)
    weights = op.outputs[1] if len(op.outputs) > 1 and op.outputs[1].consumers else None
    if weights is None:
        att = b.node("Attention", [q, k, v], q_num_heads=heads, kv_num_heads=heads)
    else:  # the softmax output (B, heads, L, S), averaged over heads unless it is 4-D
        att, probs = b.fresh(f"{op.name}_att"), b.fresh(f"{op.name}_probs")
        b.node("Attention", [q, k, v], [att, "", "", probs], q_num_heads=heads,
               kv_num_heads=heads, qk_matmul_output_mode=3)
        if b.rank(weights) == 4:
            b.node("Identity", [probs], weights.name)
        else:
            b.node("ReduceMean", [probs, b.const([1], hint="axes")], weights.name, keepdims=0)
    _output_projection(b, op, att)


def _output_projection(b, op, att: str) -> None:
    batch_first = bool(op.params.get("batch_first"))
    has_bias = "out_proj.bias" in op.attrs
    weight = b.weight(b.attr(op, "out_proj.weight").T.copy(), f"{op.name}.out_proj.weight")
    out = b.node("MatMul", [att, weight], b.y(op) if batch_first and not has_bias else 1)
    if has_bias:
        out = b.node("Add", [out, b.attr_weight(op, "out_proj.bias")], b.y(op) if batch_first else 1)
    if not batch_first:
        b.node("Transpose", [out], b.y(op), perm=[1, 0, 2])
