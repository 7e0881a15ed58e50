"""Attention: F.scaled_dot_product_attention -> one Attention node (opset 23);
nn.MultiheadAttention -> input projections (MatMul/Add) + Attention + output projection;
nn.TransformerEncoderLayer -> those plus LayerNormalization and the feed-forward MatMuls (its
blocks, LayerParts, are shared with the decoder family)."""
from __future__ import annotations

import copy

import numpy as np

from ..dtypes import numpy_type
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


def _in_projection(b, op, names: list[str], prefix: str, e: int) -> list[str]:
    """Q, K, V projections of batch-major (B, S, E) inputs with `<prefix>in_proj_*`."""
    weight = b.attr(op, f"{prefix}in_proj_weight")
    bias_key = f"{prefix}in_proj_bias"
    bias = b.attr(op, bias_key) if bias_key in op.attrs else None
    if names[0] == names[1] == names[2]:  # self-attention: one packed projection, then Split
        packed = b.node("MatMul", [names[0], b.weight(weight.T.copy(), f"{op.name}.{prefix}in_proj_weight")])
        if bias is not None:
            packed = b.node("Add", [packed, b.weight(bias, f"{op.name}.{bias_key}")])
        return b.node("Split", [packed], 3, axis=2, num_outputs=3)
    out = []
    for i, name in enumerate(names):
        rows = slice(i * e, (i + 1) * e)
        p = b.node("MatMul", [name, b.weight(weight[rows].T.copy(), f"{op.name}.{prefix}w{'qkv'[i]}")])
        if bias is not None:
            p = b.node("Add", [p, b.weight(bias[rows], f"{op.name}.{prefix}b{'qkv'[i]}")])
        out.append(p)
    return out


def _linear(b, op, x: str, prefix: str, out=1) -> str:
    """x @ W^T + b for the `<prefix>weight` / `<prefix>bias` of a sub-module."""
    weight = b.weight(b.attr(op, f"{prefix}weight").T.copy(), f"{op.name}.{prefix}weight")
    has_bias = f"{prefix}bias" in op.attrs
    y = b.node("MatMul", [x, weight], 1 if has_bias else out)
    if has_bias:
        y = b.node("Add", [y, b.attr_weight(op, f"{prefix}bias")], out)
    return y


def _seq_major(b, op, names: list[str]) -> list[str]:
    """Transposes (S, B, E) inputs to batch-major, once per distinct operand."""
    if op.params.get("batch_first"):
        return names
    cache: dict[str, str] = {}
    return [cache.setdefault(n, b.node("Transpose", [n], perm=[1, 0, 2])) for n in names]


def _finish(b, op, y: str) -> None:
    """Name the last node's output after the op, transposing back when not batch_first.
    `y` must be the output of the last node emitted."""
    if op.params.get("batch_first"):
        b.nodes[-1].output[0] = b.y(op)
    else:
        b.node("Transpose", [y], b.y(op), perm=[1, 0, 2])


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
    names = [o.name for o in op.inputs[:3]] if len(op.inputs) >= 3 else [b.x(op)] * 3
    q, k, v = _in_projection(b, op, _seq_major(b, op, names), "", e)
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
    _finish(b, op, _linear(b, op, att, "out_proj."))


_ACTIVATIONS = {"relu": "Relu", "gelu": "Gelu"}


class LayerParts:
    """The blocks of a Transformer*Layer whose weights sit under `prefix` in op.attrs; shared
    by the encoder-layer lowering here and the decoder family."""

    def __init__(self, b, op, prefix: str = "") -> None:
        p = op.params
        self.act = _ACTIVATIONS.get(p.get("activation", "relu"))
        if self.act is None or b.opset < 23 or b.rank(op.inputs[0]) != 3:
            raise Unsupported("needs relu/gelu, batched 3-D input and opset >= 23")
        self.b, self.op, self.prefix = b, op, prefix
        self.e, self.heads = int(p["d_model"]), int(p["nhead"])
        self.eps = float(p.get("layer_norm_eps", 1e-5))
        self.norm_first = bool(p.get("norm_first"))

    def at(self, prefix: str) -> "LayerParts":
        """The same settings for the layer whose weights sit under `prefix`."""
        parts = copy.copy(self)
        parts.prefix = prefix
        return parts

    def norm(self, x: str, key: str) -> str:
        b, op, key = self.b, self.op, f"{self.prefix}{key}"
        dtype = b.dtype(op.inputs[0])
        bias = b.attr_weight(op, f"{key}.bias") if f"{key}.bias" in op.attrs else \
            b.const(np.zeros(self.e, numpy_type(dtype)), dtype, "zeros")
        return b.node("LayerNormalization", [x, b.attr_weight(op, f"{key}.weight"), bias],
                      axis=-1, epsilon=self.eps)

    def attention(self, x: str, memory: str, key: str) -> str:
        """Multi-head attention of x over memory (x itself for self-attention)."""
        prefix = f"{self.prefix}{key}."
        q, k, v = _in_projection(self.b, self.op, [x, memory, memory], prefix, self.e)
        att = self.b.node("Attention", [q, k, v], q_num_heads=self.heads, kv_num_heads=self.heads)
        return _linear(self.b, self.op, att, f"{prefix}out_proj.")

    def feed_forward(self, x: str) -> str:
        hidden = self.b.node(self.act, [_linear(self.b, self.op, x, f"{self.prefix}linear1.")])
        return _linear(self.b, self.op, hidden, f"{self.prefix}linear2.")

    def residual(self, x: str, block, norm_key: str) -> str:
        """x + block(norm(x)) when norm_first, else norm(x + block(x))."""
        if self.norm_first:
            return self.b.node("Add", [x, block(self.norm(x, norm_key))])
        return self.norm(self.b.node("Add", [x, block(x)]), norm_key)

    def encoder_layer(self, x: str) -> str:
        x = self.residual(x, lambda h: self.attention(h, h, "self_attn"), "norm1")
        return self.residual(x, self.feed_forward, "norm2")


@lowering("nn.TransformerEncoderLayer")
def transformer_encoder_layer(b, op):
    """Self-attention block and feed-forward block with residuals and LayerNorms, in
    torch's order (norm_first or not); ONNX has no encoder-layer operator."""
    if len(op.inputs) > 1:
        raise Unsupported("attention masks")
    parts = LayerParts(b, op)
    _finish(b, op, parts.encoder_layer(_seq_major(b, op, [b.x(op)])[0]))
