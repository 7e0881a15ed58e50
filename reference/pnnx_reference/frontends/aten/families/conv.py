"""Convolutions: aten's one `_convolution` back to F.convNd / F.conv_transposeNd."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("_convolution", "convolution", produces=(
    "F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d"))
def _convolution(name, kw):
    spatial = kw["weight"].dim() - 2
    common = dict(input=kw["input"], weight=kw["weight"], bias=kw["bias"], stride=kw["stride"],
                  padding=kw["padding"], dilation=kw["dilation"], groups=kw["groups"])
    if kw["transposed"]:
        fn = getattr(F, f"conv_transpose{spatial}d")
        return fn(output_padding=kw["output_padding"], **common)
    return getattr(F, f"conv{spatial}d")(**common)


@rule("_convolution_mode", produces=("F.conv1d", "F.conv2d", "F.conv3d"))
def _convolution_mode(name, kw):
    """F.convNd with padding='same' or 'valid'."""
    fn = getattr(F, f"conv{kw['weight'].dim() - 2}d")
    return fn(kw["input"], kw["weight"], kw["bias"], kw["stride"], kw["padding"], kw["dilation"], kw["groups"])
