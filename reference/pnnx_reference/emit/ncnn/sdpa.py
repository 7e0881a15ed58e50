"""F.scaled_dot_product_attention -> SDPA: (heads, L, E) query, (groups, S, E) key,
(groups, S, Ev) value, heads a multiple of groups (grouped-query attention repeats each kv
head over consecutive query heads, as enable_gqa does). 5=attn_mask (a float blob added to
the scores: (L, S) or (1 or heads, L, S)), 6=scale (0: 1/sqrt(E)). is_causal becomes a
constant mask. Any leading axis of a batchless graph plays the heads' part, so the lowering
follows the operand shapes only."""
from __future__ import annotations

import numpy as np

from .context import FLT_MAX, CannotLower, Context, dims_params, param
from .layers import Weight
from .registry import lowers


def _inputs(op):
    names = op.inputnames or ["query", "key", "value", "attn_mask"]
    found = {name: op.inputs[i] for i, name in enumerate(names) if i < len(op.inputs)}
    return found["query"], found["key"], found["value"], found.get("attn_mask")


def _check(ctx: Context, op, q, k, v) -> None:
    if float(param(op, "dropout_p", 0.0) or 0.0) != 0.0:
        raise CannotLower("dropout_p > 0 is random: ncnn SDPA has no dropout")
    shapes = [ctx.shape(x) for x in (q, k, v)]
    if any(len(s) != len(shapes[0]) or len(s) not in (2, 3) for s in shapes):
        raise CannotLower("ncnn SDPA takes (L, E) or (heads, L, E) blobs: query/key/value of "
                          f"shapes {[tuple(ctx.torch_shape(x)) for x in (q, k, v)]} are not lowered")
    (lq, eq), (sk, ek), (sv, _) = (s[-2:] for s in shapes)
    heads, groups = shapes[0][0] if len(shapes[0]) == 3 else 1, shapes[1][0] if len(shapes[1]) == 3 else 1
    if ek != eq or sk != sv or (len(shapes[2]) == 3 and shapes[2][0] != groups):
        raise CannotLower("query/key/value shapes do not match")
    if heads != groups and (not param(op, "enable_gqa", False) or heads % groups):
        raise CannotLower(f"{heads} query heads over {groups} key/value heads need enable_gqa=True")


def _mask(ctx: Context, op, q, k, mask) -> str | None:
    """The blob added to the scores, or None."""
    lq, sk = ctx.shape(q)[-2], ctx.shape(k)[-2]
    if param(op, "is_causal", False):
        if mask is not None:
            raise CannotLower("is_causal with attn_mask")
        return _causal_mask(ctx, op, lq, sk)
    if mask is None:
        return None
    shape, heads = ctx.shape(mask), ctx.shape(q)[0] if ctx.rank(q) == 3 else 1
    if shape[-2:] != [lq, sk] or len(shape) > 3 or (len(shape) == 3 and shape[0] not in (1, heads)):
        raise CannotLower(f"attn_mask {tuple(ctx.torch_shape(mask))} must be (L, S) or (1 or heads, L, S) "
                          "per batch: ncnn SDPA does not broadcast it further")
    return ctx.blob(mask)


def _causal_mask(ctx: Context, op, lq: int, sk: int) -> str:
    """torch's causal mask is tril(ones(L, S)): query i sees keys 0..i."""
    data = np.where(np.tril(np.ones((lq, sk), bool)), 0.0, -FLT_MAX).astype(np.float32)
    name = ctx.temp(op.outputs[0].name)
    ctx.emit("MemoryData", "causal_mask", [], [name], dims_params([lq, sk]), [Weight(data.reshape(-1), tagged=False)])
    return name


@lowers("F.scaled_dot_product_attention")
def scaled_dot_product_attention(ctx: Context, op) -> None:
    q, k, v, mask = _inputs(op)
    _check(ctx, op, q, k, v)
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
