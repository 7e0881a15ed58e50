"""Channel and pixel rearrangements: PixelShuffle, PixelUnshuffle (Reorg), ChannelShuffle."""
from __future__ import annotations

import math

from ....errors import Unsupported
from ..context import Context, dims_params, param
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
    per-sample (C, h, w) blob; a (C, L) or (C, D, H, W) one is shuffled as a (C, 1, L) or
    (C, D*H, W) view (a rank-3 input is (N, C, L), never unbatched)."""
    x = op.inputs[0]
    if not ctx.has_batch(x) or ctx.rank(x) < 2:
        raise Unsupported("expects an (N, C, *) input with N the batch")
    groups = int(param(op, "groups"))
    params = {0: groups, 1: 0}
    if ctx.rank(x) == 3 or (ctx.rank(x) == 2 and groups == 2):
        # a (C, L) blob in groups of 2 runs as it is (one layer, as upstream writes it)
        ctx.emit("ShuffleChannel", "channelshuffle", [ctx.blob(x)], [op.outputs[0].name], params)
        return
    # (C, L) or (C, D, H, W): the same shuffle of the outer dim over a (C, 1, L) or (C, D*H, W)
    # view (ncnn's ShuffleChannel fails on a 2-d blob with groups other than 2)
    shape = ctx.shape(x)
    flat = ctx.reshaped(ctx.blob(x), [shape[0], math.prod(shape[1:-1]), shape[-1]], x.name)
    shuffled = ctx.temp(op.outputs[0].name)
    ctx.emit("ShuffleChannel", "channelshuffle", [flat], [shuffled], params)
    ctx.emit("Reshape", "reshape", [shuffled], [op.outputs[0].name], dims_params(shape))
