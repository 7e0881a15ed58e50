"""Operators that compute nothing at inference: dropout (eval mode), nn.Identity, clone,
detach, contiguous, positive. Consumers read the input blob directly."""
from __future__ import annotations

from ..context import Context
from ..registry import ANY, LOWERINGS, MOVES_DATA


@LOWERINGS.register("nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout",
                    "nn.FeatureAlphaDropout", "F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d",
                    "F.alpha_dropout", "F.feature_alpha_dropout", "nn.Identity", "Tensor.contiguous",
                    "Tensor.detach", "torch.clone", "Tensor.clone", "torch.detach", "torch.positive",
                    "Tensor.positive", batch=ANY, **MOVES_DATA)
def identity(ctx: Context, op) -> None:
    ctx.alias(op.outputs[0], op.inputs[0])
