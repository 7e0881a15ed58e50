"""Constant / reflect / replicate padding -> Padding (pairs innermost first: w, h, then c or d);
negative constant padding cuts: a Crop (then a Padding for the positive pads)."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..crops import crop
from ..registry import FIRST, LOWERINGS

PAD_TYPE = {"constant": 0, "replicate": 1, "reflect": 2}

PAIR_KEYS = ((2, 3), (0, 1), (7, 8))  # (left,right), (top,bottom), (front,behind)

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
        if mode != "constant":
            raise Unsupported(f"negative {mode} padding (cropping) is not lowered")
        if all(p <= 0 for p in pads):
            _crop(ctx, op, pads, out)
            return
        src = ctx.temp(out)
        _crop(ctx, op, pads, src)
    pairs = list(zip(pads[0::2], pads[1::2]))
    ctx.emit("Padding", "pad", [src], [out], padding_params(pairs, mode, param(op, "value", 0.0)))


def _crop(ctx: Context, op, pads: list[int], out: str) -> None:
    """The negative pads as a Crop (ncnn's CPU Padding cuts nothing); the positive ones are
    padded after, which gives the same result as torch's pad-then-cut (the dims are independent)."""
    shape = ctx.torch_shape(op.inputs[0])
    specs = []
    for i, (before, after) in enumerate(zip(pads[0::2], pads[1::2])):
        dim = len(shape) - 1 - i
        if before < 0 or after < 0:
            specs.append((dim, max(-before, 0), shape[dim] + min(after, 0), 1))
    crop(ctx, op, specs, out)


def padding_params(pairs, mode: str, value=0.0) -> dict:
    """Padding params for (before, after) pairs innermost first (w, h, then c or d); negative
    values count as 0 (cut by a Crop in front)."""
    p = {4: PAD_TYPE[mode]}
    for (before, after), keys in zip(pairs, PAIR_KEYS):
        p[keys[0]], p[keys[1]] = max(before, 0), max(after, 0)
    if mode == "constant":
        p[5] = float(value or 0.0)
    return p
