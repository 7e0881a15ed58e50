"""Pixel and channel shuffles: data moved, nothing computed."""
from __future__ import annotations

from ..registry import Count, moved, rule


@rule("F.pixel_shuffle", "F.pixel_unshuffle", "nn.PixelShuffle", "nn.PixelUnshuffle", "nn.ChannelShuffle",
      "F.channel_shuffle")
def _shuffle(op) -> Count:
    return Count(0, moved(op))
