"""Attention (opset 23) -> `F.scaled_dot_product_attention` where its masking is PyTorch's
(no cache, or a causal mask that is top-left aligned because there is no past); otherwise the
spec's computation spelled out: scaled Q K^T, softcap, additive bias (the mask, padded to the
keys; the bottom-right causal frontier), softmax, times V."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from . import RULES

rule = RULES.register


def _heads_first(x, heads: int):
    """[B, S, H * D] -> [B, H, S, D]."""
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(1, 2)


@rule("Attention")
def attention(ctx):
    q, k, v = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    if ctx.has(6):
        ctx.fail("Attention with nonpad_kv_seqlen (an external cache) is not supported")
    if int(ctx.attr("left_window_size", -1)) >= 0 or int(ctx.attr("right_window_size", -1)) >= 0:
        ctx.fail("Attention with a sliding window is not supported")
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
    if not wants_qk and softcap == 0.0 and simple_mask and not (causal and (past or mask is not None)):
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale, enable_gqa=gqa)
        qk = None
    else:
        y, qk = _spelled_out(q, k, v, mask, past, causal, scale, softcap, mode, gqa)
    if three_d:
        y = y.transpose(1, 2)
        y = y.reshape(y.shape[0], y.shape[1], -1)
    return [y, present_k, present_v, qk][:len(ctx.node.outputs)]


def _spelled_out(q, k, v, mask, past: int, causal: bool, scale: float, softcap: float, mode: int, gqa: bool):
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
    if causal:
        allowed = torch.ones(sq, skv, dtype=torch.bool).tril(past)
        frontier = torch.where(allowed, 0.0, float("-inf")).to(q.dtype)
        bias = frontier if bias is None else bias + frontier
    if bias is not None:
        scores = scores + bias
    probs = F.softmax(scores, dim=-1)
    qk = {0: capped, 1: capped, 2: scores, 3: probs}.get(mode)  # the spec's qk_matmul_output modes
    return torch.matmul(probs, v), qk
