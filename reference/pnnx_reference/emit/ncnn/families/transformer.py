"""nn.TransformerEncoderLayer (batch_first, batch 1, no masks) -> MultiHeadAttention, BinaryOp
adds, LayerNorms and the feed-forward InnerProducts, through those operators' own lowerings."""
from __future__ import annotations

from ....errors import Unsupported
from ....ir import Operand, Operator
from ..context import Context, param
from ..registry import LOWERINGS

# nn.TransformerEncoderLayer: each sub-module is handed, as a stand-alone operator over fresh
# operands, to the lowering registered for it (MultiheadAttention, LayerNorm, Linear, the
# activation, torch.add), so the layer writes exactly the layers and weights those write.
FEED_FORWARD_ACTIVATIONS = {"relu": "nn.ReLU", "gelu": "nn.GELU"}


def _check_encoder_layer(ctx: Context, op) -> None:
    if len(op.inputs) > 1 or param(op, "is_causal", False):
        raise Unsupported("src_mask / src_key_padding_mask / is_causal are not lowered")
    if not param(op, "batch_first", False):
        raise Unsupported("batch_first=False puts the sequence on dim 0, where ncnn expects the batch")
    if param(op, "activation", "relu") not in FEED_FORWARD_ACTIVATIONS:
        raise Unsupported(f"feed-forward activation {param(op, 'activation')!r} is not lowered (relu, gelu)")
    if ctx.rank(op.inputs[0]) != 2:
        raise Unsupported("expects a (1, L, E) input")


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
        LOWERINGS.lookup(op_type).fn(self.ctx, sub)
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


@LOWERINGS.register("nn.TransformerEncoderLayer")
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
