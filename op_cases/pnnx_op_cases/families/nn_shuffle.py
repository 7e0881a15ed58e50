"""nn.*: the `shuffle` family (emit/*/families/shuffle.py): ChannelShuffle, PixelShuffle,
PixelUnshuffle."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


@family("nn.PixelShuffle")
def pixel_shuffle():
    op = "nn.PixelShuffle"
    yield module_case(op, "r2", "nn.PixelShuffle(2)", [rand(1, 16, 3, 4)], smoke=True)
    yield module_case(op, "r3", "nn.PixelShuffle(3)", [rand(1, 18, 2, 3)])
    yield module_case(op, "r2_b2_c4", "nn.PixelShuffle(2)", [rand(2, 4, 3, 3)])
    yield module_case(op, "r2_unbatched", "nn.PixelShuffle(2)", [rand(12, 3, 2)], tags={"unbatched"})
    yield module_case(op, "r1", "nn.PixelShuffle(1)", [rand(1, 3, 4, 4)])


@family("nn.PixelUnshuffle")
def pixel_unshuffle():
    op = "nn.PixelUnshuffle"
    yield module_case(op, "r2", "nn.PixelUnshuffle(2)", [rand(1, 4, 6, 8)], smoke=True)
    yield module_case(op, "r3", "nn.PixelUnshuffle(3)", [rand(1, 2, 6, 9)])
    yield module_case(op, "r2_b2_c1", "nn.PixelUnshuffle(2)", [rand(2, 1, 4, 6)])
    yield module_case(op, "r2_unbatched", "nn.PixelUnshuffle(2)", [rand(3, 4, 4)], tags={"unbatched"})


@family("nn.ChannelShuffle")
def channel_shuffle():
    op = "nn.ChannelShuffle"
    yield module_case(op, "g2", "nn.ChannelShuffle(2)", [rand(1, 8, 3, 4)], smoke=True)
    yield module_case(op, "g3", "nn.ChannelShuffle(3)", [rand(1, 12, 2, 3)])
    yield module_case(op, "g4_b2", "nn.ChannelShuffle(4)", [rand(2, 16, 2, 2)])
    yield module_case(op, "g2_r3", "nn.ChannelShuffle(2)", [rand(2, 4, 5)])
    yield module_case(op, "g13", "nn.ChannelShuffle(13)", [rand(1, 26, 2, 2)])
    yield module_case(op, "g3_r3", "nn.ChannelShuffle(3)", [rand(2, 6, 5)])
    yield module_case(op, "g2_r5", "nn.ChannelShuffle(2)", [rand(1, 4, 3, 5, 6)])
    yield module_case(op, "g3_r5_b2", "nn.ChannelShuffle(3)", [rand(2, 6, 2, 3, 4)])
