"""Operators that compute nothing at inference: dropout (eval mode), nn.Identity, clone,
detach, contiguous, positive -> Identity; F.dropout with training=True -> Dropout."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Identity", "nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d",
                    "nn.AlphaDropout", "nn.FeatureAlphaDropout", "Tensor.contiguous", "Tensor.clone",
                    "Tensor.detach", "torch.clone", "torch.detach", "torch.positive", "Tensor.positive")
def identity(b, op):
    b.node("Identity", [b.x(op)], b.y(op))


@LOWERINGS.register("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
                    "F.feature_alpha_dropout")
def dropout(b, op):
    if not op.params.get("training", False):
        b.node("Identity", [b.x(op)], b.y(op))
        return
    if op.type != "F.dropout":
        raise Unsupported("training=True: ONNX Dropout drops elements, not channels or alpha")
    ratio = b.const(float(op.params.get("p", 0.5)), b.dtype(op.inputs[0]), "ratio")
    b.node("Dropout", [b.x(op), ratio, b.const(True, "bool", "training")], b.y(op))
