"""Operators that compute nothing at inference: dropout (eval mode), nn.Identity, clone,
detach, contiguous, positive -> Identity; F.dropout with training=True -> Dropout."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Identity", "nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d",
                    "nn.AlphaDropout", "nn.FeatureAlphaDropout", "Tensor.contiguous", "Tensor.clone",
                    "Tensor.detach", "torch.clone", "torch.detach", "torch.positive", "Tensor.positive")
def identity(ctx, op):
    ctx.node("Identity", [ctx.x(op)], ctx.y(op))


@LOWERINGS.register("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
                    "F.feature_alpha_dropout")
def dropout(ctx, op):
    if not op.params.get("training", False):
        ctx.node("Identity", [ctx.x(op)], ctx.y(op))
        return
    if op.type != "F.dropout":
        raise Unsupported("training=True: ONNX Dropout drops elements, not channels or alpha")
    ratio = ctx.const(float(op.params.get("p", 0.5)), ctx.dtype(op.inputs[0]), "ratio")
    ctx.node("Dropout", [ctx.x(op), ratio, ctx.const(True, "bool", "training")], ctx.y(op))
