"""Attention layers.

nn.MultiheadAttention -> MultiHeadAttention: per projection a tagged weight then an untagged
bias (q, k, v, out); 6=scale. The batch (dim 0 with batch_first, else dim 1) is the ncnn Mat
batch, so the layer sees one (L, E) sequence at a time.

F.scaled_dot_product_attention -> SDPA: (heads, L, E) query, (groups, S, E) key,
(groups, S, Ev) value, heads a multiple of groups (grouped-query attention repeats each kv
head over consecutive query heads, as enable_gqa does). 5=attn_mask (a float blob added to
the scores: (L, S) or (1 or heads, L, S); a bool one, True where a score takes part, as 0 or
MASK_FILL), 6=scale (0: 1/sqrt(E)). is_causal becomes a
constant mask, or over lengths that follow the input one built at run time from two ramps. A 4-d (N, heads, L, E) query carries N as the ncnn Mat batch (so do key, value
and a 4-d mask); without a batch axis, any leading axis plays the heads' part, so the lowering
follows the operand shapes only. A blob with one more leading axis (a rank-5 (N, windows,
heads, L, E) query, windowed vision attention) has it folded into the heads by Reshape (grouped
heads fold alike: window w's head h reads its key/value head w * groups + h // (heads /
groups)), and the result unfolded.

A decode step's cat(past, new) keys and values stay Concat + SDPA: SDPA's own cache (7=1,
past_k/past_v inputs, the grown caches as outputs) is not used, because in the pinned ncnn
(1.0.20261020) the CPU layer writes the new rows at the wrong offsets of a cache fed from
outside (head_dim 6 or 8, checked with a hand-written param) and the Vulkan layer crashes."""
from __future__ import annotations

import math

import numpy as np

from ....errors import Unsupported
from ..arithmetic import BINARY, scalar
from ..batch import batch_reshape_params
from ..context import FLT_MAX, Context, dims_params, param, required_inputs
from ..layers import Weight
from ..ramps import ramp
from ..registry import FIRST, LOWERINGS, SEQUENCE


def _projections(op, embed: int):
    """q, k, v weights (out rows first) and biases, from the packed or the separate form."""
    if "in_proj_weight" in op.attrs:
        w = op.attrs["in_proj_weight"].to_numpy().astype(np.float32, copy=False)
        weights = [w[:embed], w[embed:2 * embed], w[2 * embed:]]
    else:
        weights = [op.attrs[f"{k}_proj_weight"].to_numpy().astype(np.float32, copy=False) for k in "qkv"]
    if "in_proj_bias" in op.attrs:
        b = op.attrs["in_proj_bias"].to_numpy().astype(np.float32, copy=False)
        biases = [b[:embed], b[embed:2 * embed], b[2 * embed:]]
    else:
        biases = [np.zeros(embed, np.float32)] * 3
    return weights, biases


def sequence_axes(ctx, op) -> tuple[list, list]:
    """query/key/value and the result: dim 0 (batch_first) or 1 when 3-d; the attention
    weights (N, L, S): dim 0; masks hold every dim."""
    q = op.inputs[0]
    if q.shape is None or len(q.shape) != 3:
        return [None] * len(op.inputs), [None] * len(op.outputs)
    first = 0 if param(op, "batch_first", False) else 1
    return [first if i < 3 else None for i in range(len(op.inputs))], [first] + [0] * (len(op.outputs) - 1)


MASK_FILL = -65504.0  # a masked score: fp16-finite, so no inf - inf in fp16 arithmetic


def _check_multihead(ctx: Context, op) -> None:
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise Unsupported("the attention weights output is used: ncnn returns only the result")
    if any(ctx.rank(x) != 2 for x in op.inputs[:3]):
        raise Unsupported("expects (N, L, E), (L, N, E) or (L, E) query/key/value")
    names = op.inputnames[3:] if len(op.inputnames) == len(op.inputs) else ["?"] * (len(op.inputs) - 3)
    if any(n not in ("attn_mask", "key_padding_mask") for n in names):
        raise Unsupported("attention masks given by position are not lowered")


def _additive_mask(ctx: Context, op, q, k) -> str | None:
    """The blob ncnn's MultiHeadAttention adds to the scores of each sequence (5=1): attn_mask
    (L, S), a float one as it is, a bool one True -> MASK_FILL; plus a constant key_padding_mask
    (N, S), which makes it one (L, S) mask per sequence, carried as the Mat batch."""
    mask, padding = op.input("attn_mask"), op.input("key_padding_mask")
    if mask is None and padding is None:
        return None
    lq, sk = ctx.shape(q)[0], ctx.shape(k)[0]
    if mask is not None and list(ctx.torch_shape(mask)) != [lq, sk]:
        raise Unsupported(f"attn_mask {tuple(ctx.torch_shape(mask))}: only an (L, S) mask is lowered")
    if padding is None:
        if mask.dtype != "bool":
            return ctx.blob(mask)
        value = ctx.constant(mask)
        if value is None:  # a 0/1 blob at run time
            return scalar(ctx, "mul", ctx.blob(mask), MASK_FILL, ctx.temp(op.outputs[0].name))
        return _mask_data(ctx, op, np.where(value.astype(bool), MASK_FILL, 0.0), None)
    keep = ctx.constant(padding)
    batch_axis = ctx.batch_axis(q)
    if keep is None or batch_axis is None or mask is not None and ctx.constant(mask) is None:
        raise Unsupported("key_padding_mask is lowered only when constant, with a batched query and a constant "
                          "attn_mask")
    base = np.zeros((lq, sk)) if mask is None else ctx.constant(mask).astype(np.float64)
    if mask is not None and mask.dtype == "bool":
        base = np.where(base.astype(bool), MASK_FILL, 0.0)
    padded = np.where(keep.astype(bool)[:, None, :], MASK_FILL, 0.0) if keep.dtype == bool else keep[:, None, :]
    return _mask_data(ctx, op, base[None] + padded, 0)


def _mask_data(ctx: Context, op, data: np.ndarray, batch_axis) -> str:
    """A MemoryData of the mask; with batch_axis 0, its (N, L, S) data as one (L, S) per sample."""
    name = ctx.temp(op.outputs[0].name)
    data = data.astype(np.float32)
    ctx.emit("MemoryData", "attn_mask", [], [name], dims_params(list(data.shape)),
             [Weight(data.reshape(-1), tagged=False)])
    if batch_axis is None:
        return name
    batched = ctx.temp(name)
    ctx.emit("Reshape", "batchaxis", [name], [batched], batch_reshape_params(list(data.shape), None, batch_axis))
    return batched


def _appended_keys(op, embed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The projected key and value rows torch appends to every sequence: bias_k / bias_v
    (add_bias_kv), then zeros (add_zero_attn)."""
    keys, values = [], []
    if param(op, "add_bias_kv", False):
        keys.append(op.attrs["bias_k"].to_numpy().astype(np.float32).reshape(embed))
        values.append(op.attrs["bias_v"].to_numpy().astype(np.float32).reshape(embed))
    if param(op, "add_zero_attn", False):
        keys.append(np.zeros(embed, np.float32))
        values.append(np.zeros(embed, np.float32))
    return keys, values


def _with_unit_rows(ctx: Context, x, n: int) -> str:
    """The (S, d) input with n zero columns and n rows of those columns' unit vectors appended."""
    d = ctx.shape(x)[-1]
    padded, out, units = ctx.temp(x.name), ctx.temp(x.name), ctx.temp(x.name)
    ctx.emit("Padding", "append_columns", [ctx.blob(x)], [padded], {3: n, 4: 0, 5: 0.0})
    data = np.concatenate([np.zeros((n, d), np.float32), np.eye(n, dtype=np.float32)], axis=1)
    ctx.emit("MemoryData", "appended_rows", [], [units], dims_params([n, d + n]), [Weight(data.reshape(-1), tagged=False)])
    ctx.emit("Concat", "append_rows", [padded, units], [out], {0: 0})
    return out


def _widened(weight: np.ndarray, bias: np.ndarray, rows: list[np.ndarray]) -> np.ndarray:
    """The projection weight with a column per appended row, (row - bias): unit row j projects
    to rows[j], the others as before (plus exact zeros)."""
    return np.concatenate([weight, np.stack([r - bias for r in rows], axis=1)], axis=1)


def _padded_mask(ctx: Context, op, mask: str, n: int) -> str:
    """A (L, S) score mask over n more keys that every query attends."""
    out = ctx.temp(op.outputs[0].name)
    ctx.emit("Padding", "mask_columns", [mask], [out], {3: n, 4: 0, 5: 0.0})
    return out


@LOWERINGS.register("nn.MultiheadAttention", batch=SEQUENCE, sequence_axes=sequence_axes,
                    bool_operands=True)
def multihead_attention(ctx: Context, op) -> None:
    """add_bias_kv / add_zero_attn: torch appends projected key/value rows to each sequence
    (and a column to the masks); ncnn's layer projects its inputs itself, so they come in as
    unit input rows that the widened key/value weights project to them."""
    _check_multihead(ctx, op)
    embed, heads = int(param(op, "embed_dim")), int(param(op, "num_heads"))
    weights, biases = _projections(op, embed)
    q, k, v = op.inputs[:3]
    inputs = [ctx.blob(x) for x in ([q] if q is k is v else [q, k] if k is v else [q, k, v])]
    keys, values = _appended_keys(op, embed)
    if keys:
        key = _with_unit_rows(ctx, k, len(keys))
        value = key if k is v else _with_unit_rows(ctx, v, len(keys))
        inputs = [inputs[0], key] if k is v else [inputs[0], key, value]
        weights[1] = _widened(weights[1], biases[1], keys)
        weights[2] = _widened(weights[2], biases[2], values)
    out_w = op.attrs["out_proj.weight"].to_numpy().astype(np.float32, copy=False)
    out_b = op.attrs["out_proj.bias"].to_numpy().astype(np.float32, copy=False) if "out_proj.bias" in op.attrs \
        else np.zeros(embed, np.float32)
    blobs = []
    for w, b in zip(weights + [out_w], biases + [out_b]):
        blobs += [Weight(w.reshape(-1), tagged=True), Weight(b.reshape(-1), tagged=False)]
    p = {0: embed, 1: heads, 2: embed * embed, 3: int(weights[1].shape[1]), 4: int(weights[2].shape[1]),
         6: 1.0 / math.sqrt(embed // heads)}
    mask = _additive_mask(ctx, op, q, k)
    if mask is not None:
        inputs.append(_padded_mask(ctx, op, mask, len(keys)) if keys else mask)
        p[5] = 1
    ctx.emit("MultiHeadAttention", "attention", inputs, [op.outputs[0].name], p, blobs)


def _check_sdpa(ctx: Context, op, q, k, v, shapes: list[list[int]]) -> None:
    if float(param(op, "dropout_p", 0.0) or 0.0) != 0.0:
        raise Unsupported("dropout_p > 0 is random: ncnn SDPA has no dropout")
    if any(len(s) != len(shapes[0]) or len(s) not in (2, 3) for s in shapes):
        raise Unsupported("ncnn SDPA takes (L, E) or (heads, L, E) blobs (leading axes of one more folded into "
                          f"the heads): query/key/value of shapes {[tuple(ctx.torch_shape(x)) for x in (q, k, v)]} "
                          "are not lowered")
    (lq, eq), (sk, ek), (sv, _) = (s[-2:] for s in shapes)
    heads, groups = shapes[0][0] if len(shapes[0]) == 3 else 1, shapes[1][0] if len(shapes[1]) == 3 else 1
    if ek != eq or sk != sv or (len(shapes[2]) == 3 and shapes[2][0] != groups):
        raise Unsupported("query/key/value shapes do not match")
    if heads != groups and (not param(op, "enable_gqa", False) or heads % groups):
        raise Unsupported(f"{heads} query heads over {groups} key/value heads need enable_gqa=True")


def _mask(ctx: Context, op, q, k, mask, heads: int) -> str | None:
    """The blob added to the scores, or None."""
    lq, sk = ctx.shape(q)[-2], ctx.shape(k)[-2]
    if param(op, "is_causal", False):
        if mask is not None:
            raise Unsupported("is_causal with attn_mask")
        return _causal_mask(ctx, op, lq, sk) if lq >= 0 and sk >= 0 else _run_time_causal_mask(ctx, op, q, k)
    if mask is None:
        return None
    shape = ctx.shape(mask)
    if shape[-2:] != [lq, sk] or len(shape) > 3 or (len(shape) == 3 and shape[0] not in (1, heads)):
        raise Unsupported(f"attn_mask {tuple(ctx.torch_shape(mask))} must be (L, S) or (1 or heads, L, S) "
                          "per batch: ncnn SDPA does not broadcast it further")
    if mask.dtype == "bool":
        return _bool_mask(ctx, op, mask, shape)
    return ctx.blob(mask)


def _bool_mask(ctx: Context, op, mask, shape: list[int]) -> str:
    """torch's bool attn_mask says where to attend (True), ncnn SDPA adds its mask blob to the
    scores: a constant one becomes 0 / -FLT_MAX (as the causal mask), a computed one 0 / MASK_FILL."""
    value = ctx.constant(mask)
    if value is None:  # the float 0/1 blob ncnn carries: (1 - m) * MASK_FILL, exact (fp16-finite)
        out = op.outputs[0].name
        return scalar(ctx, "add", scalar(ctx, "mul", ctx.blob(mask), -MASK_FILL, ctx.temp(out)), MASK_FILL,
                      ctx.temp(out))
    data = np.where(value.astype(bool), 0.0, -FLT_MAX).astype(np.float32).reshape(shape)
    name = ctx.temp(op.outputs[0].name)
    ctx.emit("MemoryData", "attn_mask", [], [name], dims_params(shape), [Weight(data.reshape(-1), tagged=False)])
    return name


def _as_shape(ctx: Context, x, shape: list[int]) -> str:
    """x's blob, reshaped to `shape` (its leading axis folded into the heads) when it differs."""
    if ctx.shape(x) == shape:
        return ctx.blob(x)
    folded = ctx.temp(x.name)
    ctx.emit("Reshape", "fold_heads", [ctx.blob(x)], [folded], dims_params(shape))
    return folded


def _causal_mask(ctx: Context, op, lq: int, sk: int) -> str:
    """torch's causal mask is tril(ones(L, S)): query i sees keys 0..i."""
    data = np.where(np.tril(np.ones((lq, sk), bool)), 0.0, -FLT_MAX).astype(np.float32)
    name = ctx.temp(op.outputs[0].name)
    ctx.emit("MemoryData", "causal_mask", [], [name], dims_params([lq, sk]), [Weight(data.reshape(-1), tagged=False)])
    return name


def _run_time_causal_mask(ctx: Context, op, q, k) -> str:
    """The causal mask over lengths that follow the input: key j after query i (j - i >= 1,
    from two ramps) is MASK_FILL, the others 0."""
    out = op.outputs[0].name
    rows = ctx.temp(out)
    ctx.emit("Reshape", "causal_rows", [ramp(ctx, q, -2, out)], [rows], {0: 1, 1: -1})
    columns = ctx.temp(out)
    ctx.emit("Reshape", "causal_columns", [ramp(ctx, k, -2, out)], [columns], {0: -1, 1: 1})
    ahead, later = ctx.temp(out), ctx.temp(out)
    ctx.emit("BinaryOp", "causal", [columns, rows], [ahead], {0: BINARY["sub"][0]})
    ctx.emit("Clip", "causal", [ahead], [later], {0: 0.0, 1: 1.0})
    return scalar(ctx, "mul", later, MASK_FILL, ctx.temp(out))


@LOWERINGS.register("F.scaled_dot_product_attention", batch=FIRST, unbatched_rank=3, batched_inputs=4,
                    bool_operands=True)
def scaled_dot_product_attention(ctx: Context, op) -> None:
    q, k, v = required_inputs(op, "query", "key", "value")
    mask = op.input("attn_mask", 3)
    shapes = [ctx.shape(x) for x in (q, k, v)]
    lead = shapes[0][0] if len(shapes[0]) == 4 else 1
    if lead > 1 or len(shapes[0]) == 4:  # (A, heads, L, E): A * heads heads, then unfolded
        if any(len(s) != 4 or s[0] != lead for s in shapes) or lead < 1:
            raise Unsupported("query, key and value leading axes differ or are unknown: not folded into the heads")
        shapes = [[lead * s[1]] + s[2:] for s in shapes]
    _check_sdpa(ctx, op, q, k, v, shapes)
    mask_blob = _mask(ctx, op, q, k, mask, shapes[0][0] if len(shapes[0]) == 3 else 1)
    inputs = [_as_shape(ctx, x, s) for x, s in zip((q, k, v), shapes)] + ([mask_blob] if mask_blob else [])
    p = {5: int(mask_blob is not None)}
    scale = param(op, "scale")
    if scale is not None:
        p[6] = float(scale)
    out = op.outputs[0].name
    if len(shapes[0]) == 3 and shapes[0] == ctx.shape(q):
        ctx.emit("SDPA", "sdpa", inputs, [out], p)
        return
    # SDPA always writes (heads, L, Ev): a single-head or folded result is reshaped back
    heads = ctx.temp(out)
    ctx.emit("SDPA", "sdpa", inputs, [heads], p)
    ctx.emit("Reshape", "reshape", [heads], [out], dims_params(ctx.shape(op.outputs[0])))


@LOWERINGS.register("ncnn.RotaryEmbed", batch=FIRST, unbatched_rank=3)
def rotary_embed(ctx: Context, op) -> None:
    """The rotary embedding fuse_rotary found: x (heads, L, E) or (L, E) and the first halves of
    its constant cos/sin tables as (L, E/2) MemoryData, or the half-width rows looked up at run
    time; 0=0 (halves, not interleaved pairs)."""
    x, cos, sin = op.inputs
    blobs = [ctx.blob(x)]
    for table, name in ((cos, "rope_cos"), (sin, "rope_sin")):
        data = ctx.constant(table)
        if data is None:  # half-width rows looked up at run time, (1, L, E/2): read as (L, E/2)
            blobs.append(_as_shape(ctx, table, ctx.shape(table)[-2:]))
            continue
        lq, e = data.shape[-2:]
        half = np.ascontiguousarray(data.reshape(lq, e)[:, : e // 2], dtype=np.float32)
        blob = ctx.temp(op.outputs[0].name)
        ctx.emit("MemoryData", name, [], [blob], dims_params([lq, e // 2]), [Weight(half.reshape(-1), tagged=False)])
        blobs.append(blob)
    ctx.emit("RotaryEmbed", "rope", blobs, [op.outputs[0].name], {0: 0})
