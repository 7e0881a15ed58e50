"""nn.TransformerEncoderLayer, nn.TransformerDecoderLayer and the full encoder-decoder
nn.Transformer -> MultiHeadAttention, BinaryOp adds, LayerNorms and the feed-forward
InnerProducts, through those operators' own lowerings (ctx.lower_operator, which carries each
operand's batch axis as the driver does: the batch of a 3-d input is the ncnn Mat batch, dim 0
with batch_first, else dim 1). Attention masks and key-padding masks go to the attentions
they belong to (see attention.py for the forms lowered)."""
from __future__ import annotations

from ....errors import Unsupported
from ....ir import Operand, Operator
from ..context import Context, param
from ..registry import LOWERINGS, SEQUENCE

# each sub-module is handed, as a stand-alone operator over fresh operands, to the lowering
# registered for it (MultiheadAttention, LayerNorm, Linear, the activation, torch.add), so the
# layers write exactly the layers and weights those write
FEED_FORWARD_ACTIVATIONS = {"relu": "nn.ReLU", "gelu": "nn.GELU"}
# keyword inputs of the layers and of nn.Transformer: the sequences, then the masks each takes
SEQUENCES = ("src", "tgt", "memory")
MASKS = {"src_mask": "encoder", "mask": "encoder", "tgt_mask": "decoder", "memory_mask": "cross"}
PADDING_MASKS = {"src_key_padding_mask": "encoder", "tgt_key_padding_mask": "decoder",
                 "memory_key_padding_mask": "cross"}


def sequence_axes(ctx, op) -> tuple[list, list]:
    """The batch: dim 0 (batch_first) or 1 of the 3-d sequences and outputs; masks hold every
    dim; none when unbatched."""
    if any(x.shape is None or len(x.shape) != 3 for x in _sequences(op)):
        return [None] * len(op.inputs), [None] * len(op.outputs)
    first = 0 if param(op, "batch_first", False) else 1
    sequences = set(map(id, _sequences(op)))
    return [first if id(x) in sequences else None for x in op.inputs], [first] * len(op.outputs)


def _sequences(op) -> list[Operand]:
    """The sequence inputs (src/tgt/memory): by keyword, else the leading positional ones."""
    names = op.inputnames if len(op.inputnames) == len(op.inputs) else []
    if names and any(n in MASKS or n in PADDING_MASKS for n in names):
        return [x for x, n in zip(op.inputs, names) if n not in MASKS and n not in PADDING_MASKS]
    count = 2 if op.type in ("nn.Transformer", "nn.TransformerDecoderLayer") else 1
    return op.inputs[:count]


def _masks(op) -> dict[str, dict[str, Operand]]:
    """Per attention (encoder, decoder, cross): its attn_mask and key_padding_mask inputs."""
    names = op.inputnames if len(op.inputnames) == len(op.inputs) else []
    found: dict[str, dict[str, Operand]] = {}
    for x, name in zip(op.inputs, names):
        if name in MASKS:
            found.setdefault(MASKS[name], {})["attn_mask"] = x
        elif name in PADDING_MASKS:
            found.setdefault(PADDING_MASKS[name], {})["key_padding_mask"] = x
    if not names and len(op.inputs) > len(_sequences(op)):
        raise Unsupported("attention masks given by position are not lowered")
    return found


def _check(ctx: Context, op) -> None:
    if param(op, "is_causal", False) and not _masks(op):
        raise Unsupported("is_causal without a mask is not lowered")
    if param(op, "activation", "relu") not in FEED_FORWARD_ACTIVATIONS:
        raise Unsupported(f"feed-forward activation {param(op, 'activation')!r} is not lowered (relu, gelu)")
    for x in _sequences(op):
        if ctx.rank(x) != 2:
            raise Unsupported("expects (N, L, E), (L, N, E) or (L, E) sequences")


class _Block:
    """The parts of one layer, its sub-modules' attributes under `prefix` (`encoder.layers.0.`
    in an nn.Transformer)."""

    def __init__(self, ctx: Context, op, prefix: str = "") -> None:
        self.ctx, self.op, self.prefix = ctx, op, prefix
        self.embed = int(param(op, "d_model"))

    def at(self, prefix: str) -> "_Block":
        return _Block(self.ctx, self.op, prefix)

    def _sub(self, op_type: str, part: str, inputs, like: Operand, width: int, params=None, names=None,
             attrs_of: str | None = None, out=None) -> Operand:
        """Lower `op_type` over `inputs` into a new operand shaped like `like` with last dim
        `width` (or into `out`); its attributes are those under `<prefix><attrs_of or part>.`."""
        prefix = f"{self.prefix}{part if attrs_of is None else attrs_of}."
        attrs = {k[len(prefix):]: v for k, v in self.op.attrs.items() if k.startswith(prefix)}
        name = out.name if out is not None else self.ctx.temp(self.op.outputs[0].name)
        shape = None if like.shape is None else [*like.shape[:-1], width]
        result = Operand(name, shape, like.dtype)
        sub = Operator(op_type, f"{self.op.name}.{self.prefix}{part}", list(inputs), [result], dict(params or {}),
                       attrs)
        sub.inputnames = list(names or [])
        result.producer = sub
        self.ctx.lower_operator(sub)
        return result

    def attention(self, part: str, x: Operand, memory: Operand, masks: dict | None) -> Operand:
        params = {"embed_dim": self.embed, "num_heads": int(param(self.op, "nhead")),
                  "batch_first": bool(param(self.op, "batch_first", False))}
        inputs, names = [x, memory, memory], ["query", "key", "value"]
        for name, mask in (masks or {}).items():
            inputs, names = [*inputs, mask], [*names, name]
        return self._sub("nn.MultiheadAttention", part, inputs, x, self.embed, params, names)

    def norm(self, x: Operand, part: str, out=None) -> Operand:
        params = {"normalized_shape": [self.embed], "eps": float(param(self.op, "layer_norm_eps", 1e-5))}
        return self._sub("nn.LayerNorm", part, [x], x, self.embed, params, out=out)

    def feed_forward(self, x: Operand) -> Operand:
        width = int(param(self.op, "dim_feedforward"))
        hidden = self._sub("nn.Linear", "linear1", [x], x, width)
        act = FEED_FORWARD_ACTIVATIONS[param(self.op, "activation", "relu")]
        hidden = self._sub(act, "activation", [hidden], hidden, width, attrs_of="")
        return self._sub("nn.Linear", "linear2", [hidden], hidden, self.embed)

    def add(self, a: Operand, b: Operand, out=None) -> Operand:
        return self._sub("torch.add", "residual", [a, b], a, self.embed, attrs_of="", out=out)

    def residual(self, x: Operand, block, norm: str, out=None) -> Operand:
        """torch's order: x + block(norm(x)) when norm_first, else norm(x + block(x))."""
        if param(self.op, "norm_first", False):
            return self.add(x, block(self.norm(x, norm)), out=out)
        return self.norm(self.add(x, block(x)), norm, out=out)

    def encoder_layer(self, x: Operand, masks: dict | None, out=None) -> Operand:
        x = self.residual(x, lambda h: self.attention("self_attn", h, h, masks), "norm1")
        return self.residual(x, self.feed_forward, "norm2", out=out)

    def decoder_layer(self, x: Operand, memory: Operand, masks: dict, out=None) -> Operand:
        x = self.residual(x, lambda h: self.attention("self_attn", h, h, masks.get("decoder")), "norm1")
        x = self.residual(x, lambda h: self.attention("multihead_attn", h, memory, masks.get("cross")), "norm2")
        return self.residual(x, self.feed_forward, "norm3", out=out)


@LOWERINGS.register("nn.TransformerEncoderLayer", batch=SEQUENCE, sequence_axes=sequence_axes,
                    bool_operands=True)
def transformer_encoder_layer(ctx: Context, op) -> None:
    _check(ctx, op)
    _Block(ctx, op).encoder_layer(_sequences(op)[0], _masks(op).get("encoder"), out=op.outputs[0])


@LOWERINGS.register("nn.TransformerDecoderLayer", batch=SEQUENCE, sequence_axes=sequence_axes,
                    bool_operands=True)
def transformer_decoder_layer(ctx: Context, op) -> None:
    _check(ctx, op)
    tgt, memory = _sequences(op)
    _Block(ctx, op).decoder_layer(tgt, memory, _masks(op), out=op.outputs[0])


@LOWERINGS.register("nn.Transformer", batch=SEQUENCE, sequence_axes=sequence_axes,
                    bool_operands=True)
def transformer(ctx: Context, op) -> None:
    """Encoder layers then the encoder's LayerNorm over src, decoder layers over tgt attending
    to that memory, then the decoder's LayerNorm."""
    _check(ctx, op)
    src, tgt = _sequences(op)
    masks, block = _masks(op), _Block(ctx, op)
    memory = src
    for i in range(int(param(op, "num_encoder_layers", 6))):
        memory = block.at(f"encoder.layers.{i}.").encoder_layer(memory, masks.get("encoder"))
    memory = block.at("encoder.").norm(memory, "norm")
    x = tgt
    for i in range(int(param(op, "num_decoder_layers", 6))):
        x = block.at(f"decoder.layers.{i}.").decoder_layer(x, memory, masks)
    block.at("decoder.").norm(x, "norm", out=op.outputs[0])
