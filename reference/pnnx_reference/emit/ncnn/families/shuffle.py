"""Channel and pixel rearrangements: PixelShuffle, PixelUnshuffle (Reorg), ChannelShuffle."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..registry import FIRST, LOWERINGS


def _rank3(ctx: Context, op) -> None:
    if ctx.rank(op.inputs[0]) != 3:
        raise Unsupported("expects a (1,c,h,w) input")


@LOWERINGS.register("nn.PixelShuffle", "F.pixel_shuffle", batch=FIRST, unbatched_rank=3)
def pixel_shuffle(ctx: Context, op) -> None:
    _rank3(ctx, op)
    ctx.emit("PixelShuffle", "pixelshuffle", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(param(op, "upscale_factor")), 1: 0})


@LOWERINGS.register("nn.PixelUnshuffle", "F.pixel_unshuffle", batch=FIRST, unbatched_rank=3)
def pixel_unshuffle(ctx: Context, op) -> None:
    _rank3(ctx, op)
    ctx.emit("Reorg", "pixelunshuffle", [ctx.blob(op.inputs[0])], [op.outputs[0].name],
             {0: int(param(op, "downscale_factor"))})


@LOWERINGS.register("nn.ChannelShuffle", "F.channel_shuffle", "torch.channel_shuffle", batch=FIRST)
def channel_shuffle(ctx: Context, op) -> None:
    """torch shuffles dim 1 of an (N, C, *) input: ShuffleChannel shuffles the outer dim of the
    per-sample (C, h, w) or (C, L) blob (a rank-3 input is (N, C, L), never unbatched)."""
    x = op.inputs[0]
    if not ctx.has_batch(x) or ctx.rank(x) not in (2, 3):
        raise Unsupported("expects an (N, C, L) or (N, C, H, W) input")
    ctx.emit("ShuffleChannel", "channelshuffle", [ctx.blob(x)], [op.outputs[0].name],
             {0: int(param(op, "groups")), 1: 0})
