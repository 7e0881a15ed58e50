"""Attention (opset 23) -> `F.scaled_dot_product_attention` where its masking is PyTorch's
(no cache, or a causal mask that is top-left aligned because there is no past); otherwise the
spec's computation spelled out: scaled Q K^T, softcap, additive bias (the mask, padded to the
keys; the bottom-right causal frontier), softmax, times V."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from ..values import constant
from .registry import RULES

rule = RULES.register


def _heads_first(x, heads: int):
    """[B, S, H * D] -> [B, H, S, D]."""
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(1, 2)


@rule("Attention", produces=(
      "F.pad", "F.scaled_dot_product_attention", "F.softmax", "Tensor.reshape", "Tensor.transpose",
      "torch.amax", "torch.cat", "torch.logical_and", "torch.matmul", "torch.repeat_interleave", "torch.tanh",
      "torch.where"))
def attention(ctx):
    q, k, v = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    lengths = ctx.tensor(6) if ctx.has(6) else None  # opset 24: valid keys per batch (an external cache)
    window = (int(ctx.attr("left_window_size", -1)), int(ctx.attr("right_window_size", -1)))  # opset 25
    three_d = q.dim() == 3
    if three_d:
        q = _heads_first(q, int(ctx.attr("q_num_heads")))
        k = _heads_first(k, int(ctx.attr("kv_num_heads")))
        v = _heads_first(v, int(ctx.attr("kv_num_heads")))
    past = int(ctx.tensor(4).shape[2]) if ctx.has(4) else 0
    if ctx.has(4):
        k = torch.cat([ctx.tensor(4), k], dim=2)
        v = torch.cat([ctx.tensor(5), v], dim=2)
    present_k, present_v = k, v
    scale = ctx.attr("scale")
    scale = float(scale) if scale is not None else 1 / math.sqrt(int(q.shape[3]))
    causal = bool(int(ctx.attr("is_causal", 0)))
    softcap = float(ctx.attr("softcap", 0.0))
    mode = int(ctx.attr("qk_matmul_output_mode", 0))
    mask = ctx.tensor(3) if ctx.has(3) else None
    wants_qk = len(ctx.node.outputs) > 3 and bool(ctx.node.outputs[3])
    gqa = int(q.shape[1]) != int(k.shape[1])
    simple_mask = mask is None or int(mask.shape[-1]) == int(k.shape[2])
    plain = lengths is None and window == (-1, -1)
    if plain and not wants_qk and softcap == 0.0 and simple_mask and not (causal and (past or mask is not None)):
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
        qk = None
    else:
        y, qk = _spelled_out(q, k, v, mask, past, causal, scale, softcap, mode, gqa, lengths, window)
    if three_d:
        y = y.transpose(1, 2)
        y = y.reshape(y.shape[0], y.shape[1], -1)
    return [y, present_k, present_v, qk][:len(ctx.node.outputs)]


def _frontier(sq: int, skv: int, offset, left: int, right: int, causal: bool):
    """Allowed (query i, key j) pairs: j <= i + offset when causal, within the window around
    i + offset; `offset` is a number or a per-batch tensor (then [B, 1, Sq, Skv])."""
    i = constant(np.arange(sq).reshape(sq, 1), torch.int64)
    j = constant(np.arange(skv).reshape(1, skv), torch.int64)
    if isinstance(offset, torch.Tensor):
        position = i + offset.reshape(-1, 1, 1, 1).to(torch.int64)
    else:
        position = constant(np.arange(sq).reshape(sq, 1) + offset, torch.int64)
    allowed = None
    for condition, wanted in ((lambda: j <= position, causal), (lambda: position - j <= left, left >= 0),
                              (lambda: j - position <= right, right >= 0)):
        if wanted:
            allowed = condition() if allowed is None else torch.logical_and(allowed, condition())
    return allowed


def _spelled_out(q, k, v, mask, past: int, causal: bool, scale: float, softcap: float, mode: int, gqa: bool,
                 lengths=None, window=(-1, -1)):
    sq, skv = int(q.shape[2]), int(k.shape[2])
    if gqa:
        repeat = int(q.shape[1]) // int(k.shape[1])
        k, v = torch.repeat_interleave(k, repeat, dim=1), torch.repeat_interleave(v, repeat, dim=1)
    root = math.sqrt(scale)
    scores = torch.matmul(q * root, (k * root).transpose(-1, -2))
    if softcap > 0:
        scores = torch.tanh(scores / softcap) * softcap
    capped = scores
    bias = None
    if mask is not None:
        if mask.dtype == torch.bool:
            mask = torch.where(mask, 0.0, float("-inf")).to(q.dtype)
        if int(mask.shape[-1]) < skv:
            mask = F.pad(mask, [0, skv - int(mask.shape[-1])], value=float("-inf"))
        bias = mask
    if causal or window != (-1, -1):
        offset = lengths - sq if lengths is not None and not past else past
        allowed = _frontier(sq, skv, offset, window[0], window[1], causal)
        frontier = torch.where(allowed, 0.0, float("-inf")).to(q.dtype)
        bias = frontier if bias is None else bias + frontier
    if lengths is not None:  # keys past each batch's valid length are masked
        keys = constant(np.arange(skv).reshape(1, skv), torch.int64)
        valid = (keys < lengths.reshape(-1, 1).to(torch.int64)).reshape(-1, 1, 1, skv)
        padding = torch.where(valid, 0.0, float("-inf")).to(q.dtype)
        bias = padding if bias is None else bias + padding
    if bias is not None:
        scores = scores + bias
    probs = F.softmax(scores, dim=-1)
    if bias is not None:  # a row with no key left attends to nothing: zeros, not NaN
        masked_row = torch.isneginf(torch.amax(bias, dim=-1, keepdim=True))
        probs = torch.where(masked_row, 0.0, probs)
    qk = {0: capped, 1: capped, 2: scores, 3: probs}.get(mode)  # the spec's qk_matmul_output modes
    return torch.matmul(probs, v), qk


@rule("RotaryEmbedding", produces=(
      "F.embedding", "Tensor.reshape", "Tensor.transpose", "Tensor.unsqueeze", "torch.cat", "torch.chunk",
      "torch.stack"))
def rotary_embedding(ctx):
    """Opset 23: rotate (pairs of halves, or interleaved pairs of) the first rotary dims of each
    head by the cached angles of its position."""
    x, cos, sin = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    four_d = x.dim() == 4
    if four_d:
        x = x.transpose(1, 2)  # [B, S, H, D]
    else:
        b, s, hidden = x.shape
        heads = int(ctx.attr("num_heads"))
        x = x.reshape(b, s, heads, hidden // heads)
    head = int(x.shape[3])
    rotary = int(ctx.attr("rotary_embedding_dim", 0) or 0) or head
    if ctx.has(3):
        positions = ctx.tensor(3)
        cos, sin = F.embedding(positions, cos), F.embedding(positions, sin)
    cos, sin = cos.unsqueeze(2), sin.unsqueeze(2)
    rotate, keep = x[..., :rotary], x[..., rotary:]
    interleaved = bool(int(ctx.attr("interleaved", 0)))
    if interleaved:
        x1, x2 = rotate[..., 0::2], rotate[..., 1::2]
    else:
        x1, x2 = torch.chunk(rotate, 2, dim=-1)
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if interleaved:
        rotated = torch.stack([real, imag], dim=-1).reshape(rotate.shape)
    else:
        rotated = torch.cat([real, imag], dim=-1)
    y = torch.cat([rotated, keep], dim=-1) if rotary < head else rotated
    return y.transpose(1, 2) if four_d else y.reshape(ctx.tensor(0).shape)


_LINEAR_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True),
                 "gated_delta": (True, True)}  # update rule -> (decays, delta-corrects)


@rule("LinearAttention", produces=(
      "Tensor.repeat_interleave", "Tensor.reshape", "Tensor.squeeze", "Tensor.transpose", "Tensor.unsqueeze",
      "torch.cat", "torch.exp", "torch.matmul", "torch.zeros"))
def linear_attention(ctx):
    """LinearAttention (opset 27): the recurrence spelled out token by token (the length is
    known at conversion), in float32 as the spec computes it: per step the state decays by
    exp(decay) (gated rules), takes k (x) v, or beta k (x) (v - S^T k) (delta rules), and
    the output is scale q^T S, each query head reading its key/value head's state."""
    rule_name = ctx.attr("update_rule", "gated_delta")
    if rule_name not in _LINEAR_RULES:
        ctx.fail(f"update_rule {rule_name!r} is not one the operator defines")
    decays, corrects = _LINEAR_RULES[rule_name]
    hq, hkv = int(ctx.attr("q_num_heads", 0)), int(ctx.attr("kv_num_heads", 0))
    if hq <= 0 or hkv <= 0 or hq % hkv:
        ctx.fail("q_num_heads must be a positive multiple of kv_num_heads")
    query = ctx.tensor(0)
    q, k, v = (_heads_first(ctx.tensor(i).float(), h) for i, h in ((0, hq), (1, hkv), (2, hkv)))
    d_k, d_v = int(q.shape[-1]), int(v.shape[-1])
    state = ctx.tensor(3).float() if ctx.has(3) else torch.zeros(int(q.shape[0]), hkv, d_k, d_v)
    decay = _heads_first(ctx.tensor(4).float(), hkv if ctx.tensor(4).shape[-1] == hkv * d_k else
                         int(ctx.tensor(4).shape[-1])) if decays else None
    beta = _heads_first(ctx.tensor(5).float(), int(ctx.tensor(5).shape[-1])) if corrects else None
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(d_k)
    outputs = []
    for t in range(int(q.shape[2])):
        if decays:
            state = state * torch.exp(decay[:, :, t]).unsqueeze(-1)
        kt, vt = k[:, :, t], v[:, :, t]
        if corrects:
            seen = torch.matmul(kt.unsqueeze(-2), state).squeeze(-2)
            state = state + beta[:, :, t].unsqueeze(-1) * kt.unsqueeze(-1) * (vt - seen).unsqueeze(-2)
        else:
            state = state + kt.unsqueeze(-1) * vt.unsqueeze(-2)
        shared = state.repeat_interleave(hq // hkv, dim=1) if hq != hkv else state
        outputs.append(torch.matmul(q[:, :, t].unsqueeze(-2), shared) * scale)
    y = torch.cat(outputs, dim=2).transpose(1, 2).reshape(int(q.shape[0]), int(q.shape[2]), hq * d_v)
    present = state.to(ctx.tensor(3).dtype if ctx.has(3) else query.dtype)
    return [y.to(query.dtype), present][:len(ctx.node.outputs)]
