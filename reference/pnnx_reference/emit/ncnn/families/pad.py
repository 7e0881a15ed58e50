"""Constant / reflect / replicate padding -> Padding (pairs innermost first: w, h, then c or d)."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, param
from ..registry import LOWERINGS

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
                    "nn.ReplicationPad2d", "nn.ReplicationPad3d", "F.pad")
def pad(ctx: Context, op) -> None:
    mode = _mode(op)
    if mode not in PAD_TYPE:
        raise Unsupported(f"padding mode {mode!r} has no ncnn Padding equivalent")
    pads = _pads(op)
    rank = ctx.rank(op.inputs[0])
    if len(pads) > 2 * min(rank, 3) or len(pads) % 2:
        raise Unsupported(f"{len(pads) // 2} padded dims on a rank-{rank} blob")
    if any(p < 0 for p in pads):
        raise Unsupported("negative padding (cropping) is not lowered")
    if len(pads) == 6 and mode != "constant" and rank == 3:
        raise Unsupported("reflect/replicate padding of the channel axis")
    p = {4: PAD_TYPE[mode]}
    for pair, keys in zip(zip(pads[0::2], pads[1::2]), PAIR_KEYS):
        p[keys[0]], p[keys[1]] = pair
    value = param(op, "value", 0.0)
    if mode == "constant":
        p[5] = float(value or 0.0)
    ctx.emit("Padding", "pad", [ctx.blob(op.inputs[0])], [op.outputs[0].name], p)
