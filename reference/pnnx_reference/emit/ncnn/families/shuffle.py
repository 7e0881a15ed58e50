"""Channel and pixel rearrangements: PixelShuffle, PixelUnshuffle (Reorg), ChannelShuffle."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..registry import LOWERINGS


def _rank3(ctx: Context, op) -> None:
    if ctx.rank(op.inputs[0]) != 3:
        raise Unsupported("expects a (1,c,h,w) input")


@LOWERINGS.register("nn.PixelShuffle", "F.pixel_shuffle")
def pixel_shuffle(ctx: Context, op) -> None:
    _rank3(ctx, op)
    ctx.emit("PixelShuffle", "pixelshuffle", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(param(op, "upscale_factor")), 1: 0})


@LOWERINGS.register("nn.PixelUnshuffle", "F.pixel_unshuffle")
def pixel_unshuffle(ctx: Context, op) -> None:
    _rank3(ctx, op)
    ctx.emit("Reorg", "pixelunshuffle", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(param(op, "downscale_factor"))})


@LOWERINGS.register("nn.ChannelShuffle", "F.channel_shuffle", "torch.channel_shuffle")
def channel_shuffle(ctx: Context, op) -> None:
    _rank3(ctx, op)
    ctx.emit("ShuffleChannel", "channelshuffle", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(param(op, "groups")), 1: 0})
