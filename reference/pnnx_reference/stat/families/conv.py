"""Convolutions: two operations per multiply-accumulate, plus one per output for the bias."""
from __future__ import annotations

import math

from ..registry import Count, moved, numel, output, rule


def _weight_shape(op):
    if "weight" in op.attrs:
        return op.attrs["weight"].shape
    return op.input("weight", 1).shape


def _has_bias(op) -> bool:
    if "bias" in op.attrs:
        return True
    return op.params.get("bias") is True or any(n == "bias" for n in op.inputnames)


@rule("nn.Conv1d", "nn.Conv2d", "nn.Conv3d", "F.conv1d", "F.conv2d", "F.conv3d")
def _conv(op) -> Count:
    weight = _weight_shape(op)  # (out, in / groups, k...)
    macs = math.prod(weight[1:])
    return Count(output(op) * (2 * macs + _has_bias(op)), moved(op))


@rule("nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d",
      "F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d")
def _deconv(op) -> Count:
    """Every input element is scattered into out_channels / groups x kernel outputs."""
    weight = _weight_shape(op)  # (in, out / groups, k...)
    scattered = numel(op.inputs[0]) * math.prod(weight[1:])
    return Count(2 * scattered + (output(op) if _has_bias(op) else 0), moved(op))
