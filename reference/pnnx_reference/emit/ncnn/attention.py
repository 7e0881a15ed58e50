"""nn.MultiheadAttention (batch_first, batch 1) -> MultiHeadAttention: per projection a
tagged weight then an untagged bias (q, k, v, out); 6=scale.
nn.TransformerEncoderLayer (batch_first, batch 1, no masks) -> MultiHeadAttention, BinaryOp
adds, LayerNorms and the feed-forward InnerProducts, through those operators' own lowerings."""
from __future__ import annotations

import math

import numpy as np

from ...ir import Operand, Operator
from .context import CannotLower, Context, param
from .layers import Weight
from .registry import lowering_for, lowers


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


def _check(ctx: Context, op) -> None:
    if not param(op, "batch_first", False):
        raise CannotLower("batch_first=False puts the sequence on dim 0, where ncnn expects the batch")
    if param(op, "add_bias_kv", False) or param(op, "add_zero_attn", False):
        raise CannotLower("add_bias_kv / add_zero_attn have no ncnn equivalent")
    if len(op.inputs) > 3:
        raise CannotLower("attention masks are not lowered")
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise CannotLower("the attention weights output is used: ncnn returns only the result")
    if any(ctx.rank(x) != 2 for x in op.inputs):
        raise CannotLower("expects (1, L, E) query/key/value")


@lowers("nn.MultiheadAttention")
def multihead_attention(ctx: Context, op) -> None:
    _check(ctx, op)
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


# nn.TransformerEncoderLayer: each sub-module is handed, as a stand-alone operator over fresh
# operands, to the lowering registered for it (MultiheadAttention, LayerNorm, Linear, the
# activation, torch.add), so the layer writes exactly the layers and weights those write.
FEED_FORWARD_ACTIVATIONS = {"relu": "nn.ReLU", "gelu": "nn.GELU"}


def _check_encoder_layer(ctx: Context, op) -> None:
    if len(op.inputs) > 1 or param(op, "is_causal", False):
        raise CannotLower("src_mask / src_key_padding_mask / is_causal are not lowered")
    if not param(op, "batch_first", False):
        raise CannotLower("batch_first=False puts the sequence on dim 0, where ncnn expects the batch")
    if param(op, "activation", "relu") not in FEED_FORWARD_ACTIVATIONS:
        raise CannotLower(f"feed-forward activation {param(op, 'activation')!r} is not lowered (relu, gelu)")
    if ctx.rank(op.inputs[0]) != 2:
        raise CannotLower("expects a (1, L, E) input")


class _EncoderLayer:
    def __init__(self, ctx: Context, op) -> None:
        self.ctx, self.op = ctx, op
        self.seq = ctx.torch_shape(op.inputs[0])[:-1]
        self.embed = int(param(op, "d_model"))

    def _sub(self, op_type: str, part: str, inputs, width: int, params=None, prefix=None, out=None):
        """Lower `op_type` over `inputs` into a new operand of last dim `width` (or `out`)."""
        prefix = f"{part}." if prefix is None else prefix
        attrs = {k[len(prefix):]: v for k, v in self.op.attrs.items() if prefix and k.startswith(prefix)}
        name = out.name if out is not None else self.ctx.temp(self.op.outputs[0].name)
        result = Operand(name, [*self.seq, width], self.op.inputs[0].dtype)
        sub = Operator(op_type, f"{self.op.name}.{part}", list(inputs), [result], dict(params or {}), attrs)
        result.producer = sub
        lowering_for(op_type)(self.ctx, sub)
        return result

    def attention(self, x):
        params = {"embed_dim": self.embed, "num_heads": int(param(self.op, "nhead")), "batch_first": True}
        return self._sub("nn.MultiheadAttention", "self_attn", [x, x, x], self.embed, params)

    def norm(self, x, part: str, out=None):
        params = {"normalized_shape": [self.embed], "eps": float(param(self.op, "layer_norm_eps", 1e-5))}
        return self._sub("nn.LayerNorm", part, [x], self.embed, params, out=out)

    def feed_forward(self, x):
        hidden = self._sub("nn.Linear", "linear1", [x], int(param(self.op, "dim_feedforward")))
        act = FEED_FORWARD_ACTIVATIONS[param(self.op, "activation", "relu")]
        hidden = self._sub(act, "activation", [hidden], int(param(self.op, "dim_feedforward")), prefix="")
        return self._sub("nn.Linear", "linear2", [hidden], self.embed)

    def add(self, a, b, out=None):
        return self._sub("torch.add", "residual", [a, b], self.embed, prefix="", out=out)


@lowers("nn.TransformerEncoderLayer")
def transformer_encoder_layer(ctx: Context, op) -> None:
    """torch's order: x + sa(norm1(x)), then + ff(norm2(.)) when norm_first; otherwise
    norm1(x + sa(x)), then norm2(. + ff(.))."""
    _check_encoder_layer(ctx, op)
    layer, x, out = _EncoderLayer(ctx, op), op.inputs[0], op.outputs[0]
    if param(op, "norm_first", False):
        x = layer.add(x, layer.attention(layer.norm(x, "norm1")))
        layer.add(x, layer.feed_forward(layer.norm(x, "norm2")), out=out)
    else:
        x = layer.norm(layer.add(x, layer.attention(x)), "norm1")
        layer.norm(layer.add(x, layer.feed_forward(x)), "norm2", out=out)
