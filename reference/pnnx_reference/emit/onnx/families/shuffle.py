"""Channel and pixel rearrangements: pixel_shuffle -> DepthToSpace; pixel_unshuffle and
channel_shuffle decompose into Reshape + Transpose + Reshape (no ONNX operator with torch's
ordering). torch's (C, H, W) input is a batch of one (unbatched.py)."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import LOWERINGS


@LOWERINGS.register("nn.PixelShuffle", "F.pixel_shuffle", unbatched_rank=3)
def pixel_shuffle(ctx, op):
    if ctx.rank(op.inputs[0]) != 4:
        raise Unsupported("DepthToSpace takes (C, H, W) or 4-D input")
    ctx.node("DepthToSpace", [ctx.x(op)], ctx.y(op), blocksize=int(op.params["upscale_factor"]),
           mode="CRD")


@LOWERINGS.register("nn.PixelUnshuffle", "F.pixel_unshuffle", unbatched_rank=3)
def pixel_unshuffle(ctx, op):
    # SpaceToDepth orders channels block-major; torch orders them channel-major
    if ctx.rank(op.inputs[0]) != 4:
        raise Unsupported("needs (C, H, W) or 4-D input")
    n, c, h, w = ctx.shape(op.inputs[0])
    r = int(op.params["downscale_factor"])
    if min(c, h, w) < 0:
        raise Unsupported("needs static C, H, W")
    split = ctx.node("Reshape", [ctx.x(op), ctx.const([0, c, h // r, r, w // r, r], hint="shape")])
    moved = ctx.node("Transpose", [split], perm=[0, 1, 3, 5, 2, 4])
    ctx.node("Reshape", [moved, ctx.const([0, c * r * r, h // r, w // r], hint="shape")], ctx.y(op))


@LOWERINGS.register("nn.ChannelShuffle", "F.channel_shuffle")
def channel_shuffle(ctx, op):
    shape = ctx.shape(op.inputs[0])
    g, c = int(op.params["groups"]), shape[1]
    if c < 0 or any(d < 0 for d in shape[2:]):
        raise Unsupported("needs static channel and spatial sizes")
    split = ctx.node("Reshape", [ctx.x(op), ctx.const([0, g, c // g] + shape[2:], hint="shape")])
    perm = [0, 2, 1] + list(range(3, len(shape) + 1))
    moved = ctx.node("Transpose", [split], perm=perm)
    ctx.node("Reshape", [moved, ctx.const([0, c] + shape[2:], hint="shape")], ctx.y(op))
