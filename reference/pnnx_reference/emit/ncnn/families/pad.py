"""Constant / reflect / replicate padding -> Padding (pairs innermost first: w, h, then c or d);
negative padding cuts: a Crop (then a Padding for the positive pads)."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..crops import crop
from ..padding import PAD_TYPE, padding_params
from ..registry import FIRST, LOWERINGS

MODULE_MODE = {"ZeroPad": "constant", "ConstantPad": "constant", "ReflectionPad": "reflect",
               "ReplicationPad": "replicate"}


def _pads(op) -> list[int]:
    pads = param(op, "padding") if op.type.startswith("nn.") else param(op, "pad")
    if isinstance(pads, int):
        n = int(op.type[-2]) if op.type[-2].isdigit() else 2
        pads = [pads] * (2 * n)
    return [int(p) for p in pads]


def _mode(op) -> str:
    if op.type.startswith("nn."):
        return next(m for prefix, m in MODULE_MODE.items() if op.type[3:].startswith(prefix))
    return param(op, "mode", "constant")


@LOWERINGS.register("nn.ZeroPad1d", "nn.ZeroPad2d", "nn.ZeroPad3d", "nn.ConstantPad1d", "nn.ConstantPad2d",
                    "nn.ConstantPad3d", "nn.ReflectionPad1d", "nn.ReflectionPad2d", "nn.ReplicationPad1d",
                    "nn.ReplicationPad2d", "nn.ReplicationPad3d", "F.pad", batch=FIRST,
                    unbatched_rank=lambda op: len(_pads(op)) // 2 + 1)
def pad(ctx: Context, op) -> None:
    mode = _mode(op)
    if mode not in PAD_TYPE:
        raise Unsupported(f"padding mode {mode!r} has no ncnn Padding equivalent")
    pads = _pads(op)
    rank = ctx.rank(op.inputs[0])
    if len(pads) > 2 * min(rank, 3) or len(pads) % 2:
        raise Unsupported(f"{len(pads) // 2} padded dims on a rank-{rank} blob")
    if len(pads) == 6 and mode != "constant" and rank == 3:
        raise Unsupported("reflect/replicate padding of the channel axis")
    src, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    if any(p < 0 for p in pads):
        _check_reflect_after_cut(ctx, op, pads, mode)
        if all(p <= 0 for p in pads):
            _crop(ctx, op, pads, out)
            return
        src = ctx.temp(out)
        _crop(ctx, op, pads, src)
    pairs = list(zip(pads[0::2], pads[1::2]))
    ctx.emit("Padding", "pad", [src], [out], padding_params(pairs, mode, param(op, "value", 0.0)))


def _check_reflect_after_cut(ctx: Context, op, pads: list[int], mode: str) -> None:
    """Cutting first changes what a reflection reads only where a dim is cut on one side and
    reflected so far on the other that torch (reflecting the uncut tensor) reads a cut element."""
    if mode != "reflect":
        return
    shape = ctx.torch_shape(op.inputs[0])
    for i, (before, after) in enumerate(zip(pads[0::2], pads[1::2])):
        size = shape[len(shape) - 1 - i]
        if min(before, after) < 0 and max(before, after) > size - 1 + min(before, after):
            raise Unsupported(f"reflect padding by {max(before, after)} beside a cut of {-min(before, after)} "
                              f"on a dim of {size}: it reflects elements the cut removes")


def _crop(ctx: Context, op, pads: list[int], out: str) -> None:
    """The negative pads as a Crop (ncnn's CPU Padding cuts nothing); the positive ones are
    padded after, which gives torch's result: a dim is cut on one side and padded on the other,
    and the pad reads only the side it extends (see _check_reflect_after_cut)."""
    shape = ctx.torch_shape(op.inputs[0])
    specs = []
    for i, (before, after) in enumerate(zip(pads[0::2], pads[1::2])):
        dim = len(shape) - 1 - i
        if before < 0 or after < 0:
            specs.append((dim, max(-before, 0), shape[dim] + min(after, 0), 1))
    crop(ctx, op, specs, out)

