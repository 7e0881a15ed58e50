"""The blocks attention layers are built from, shared by the attention and transformer families:
Q/K/V input projections, a sub-module's linear projection, and the (S, B, E) <-> batch-major
transposes around a layer that is not batch_first."""
from __future__ import annotations

from ...errors import Unsupported


def in_projection(ctx, op, names: list[str], prefix: str, e: int) -> list[str]:
    """Q, K, V projections of batch-major (B, S, E) inputs with `<prefix>in_proj_*`."""
    weight = ctx.attr(op, f"{prefix}in_proj_weight")
    bias_key = f"{prefix}in_proj_bias"
    bias = ctx.attr(op, bias_key) if bias_key in op.attrs else None
    if names[0] == names[1] == names[2]:  # self-attention: one packed projection, then Split
        packed = ctx.node("MatMul", [names[0], ctx.weight(weight.T, f"{op.name}.{prefix}in_proj_weight")])
        if bias is not None:
            packed = ctx.node("Add", [packed, ctx.weight(bias, f"{op.name}.{bias_key}")])
        return ctx.node("Split", [packed], 3, axis=2, num_outputs=3)
    out = []
    for i, name in enumerate(names):
        rows = slice(i * e, (i + 1) * e)
        p = ctx.node("MatMul", [name, ctx.weight(weight[rows].T, f"{op.name}.{prefix}w{'qkv'[i]}")])
        if bias is not None:
            p = ctx.node("Add", [p, ctx.weight(bias[rows], f"{op.name}.{prefix}b{'qkv'[i]}")])
        out.append(p)
    return out


def projection(ctx, op, x: str, prefix: str, out=1) -> str:
    """x @ W^T + b for the `<prefix>weight` / `<prefix>bias` of a sub-module."""
    weight = ctx.weight(ctx.attr(op, f"{prefix}weight").T, f"{op.name}.{prefix}weight")
    has_bias = f"{prefix}bias" in op.attrs
    y = ctx.node("MatMul", [x, weight], 1 if has_bias else out)
    if has_bias:
        y = ctx.node("Add", [y, ctx.attr_weight(op, f"{prefix}bias")], out)
    return y


def batch_major(ctx, op, names: list[str]) -> list[str]:
    """Transposes (S, B, E) inputs to batch-major, once per distinct operand."""
    if op.params.get("batch_first"):
        return names
    cache: dict[str, str] = {}
    return [cache.setdefault(n, ctx.node("Transpose", [n], perm=[1, 0, 2])) for n in names]


def sequence_output(ctx, op, y: str) -> None:
    """Name the last node's output after the op, transposing back when not batch_first.
    `y` must be the output of the last node emitted."""
    if op.params.get("batch_first"):
        ctx.nodes[-1].output[0] = ctx.y(op)
    else:
        ctx.node("Transpose", [y], ctx.y(op), perm=[1, 0, 2])


def score_mask(ctx, attn_mask, key_padding_mask, query, key, batch_first: bool) -> str | None:
    """One float mask added to the attention scores, as torch's attention modules merge theirs:
    a bool mask is -inf where True, a float one is added as it is; the attn_mask is (L, S), the
    key_padding_mask (B, S) covers every query. Expanded to (B or 1, 1, L, S): onnxruntime's
    Attention does not broadcast a mask over the query rows. None without masks."""
    if attn_mask is None and key_padding_mask is None:
        return None
    dtype = ctx.dtype(query)
    axis = 1 if batch_first else 0
    rows, columns = ctx.shape(query)[axis], ctx.shape(key)[axis]
    if ctx.rank(query) != 3 or min(rows, columns) < 1:
        raise Unsupported("attention masks need batched (3-D) sequences of known lengths")
    parts = []
    if attn_mask is not None:
        if ctx.rank(attn_mask) != 2:
            raise Unsupported("attn_mask per batch and head (3-D) is not lowered")
        parts.append(_additive(ctx, attn_mask, dtype))
    if key_padding_mask is not None:
        if ctx.rank(key_padding_mask) != 2:
            raise Unsupported("key_padding_mask must be (batch, source length)")
        parts.append(ctx.node("Unsqueeze", [_additive(ctx, key_padding_mask, dtype), ctx.const([1, 2], hint="axes")]))
    merged = parts[0] if len(parts) == 1 else ctx.node("Add", parts)
    return ctx.node("Expand", [merged, ctx.const([1, 1, rows, columns], hint="shape")])


def _additive(ctx, mask, dtype: str) -> str:
    if ctx.dtype(mask) == "bool":
        return ctx.node("Where", [mask.name, ctx.const(float("-inf"), dtype, "neg_inf"), ctx.const(0.0, dtype, "zero")])
    if ctx.dtype(mask) != dtype:
        raise Unsupported(f"a {ctx.dtype(mask)} attention mask over {dtype} scores")
    return mask.name
