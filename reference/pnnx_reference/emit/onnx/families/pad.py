"""F.pad and the nn.*Pad* modules -> Pad (constant, reflect, edge, wrap)."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import int_list, ints
from ..registry import LOWERINGS

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}

_PAD_MODULES = {"ZeroPad": "constant", "ConstantPad": "constant", "ReflectionPad": "reflect",
                "ReplicationPad": "replicate", "CircularPad": "circular"}


def _onnx_pads(torch_pad: list[int], rank: int) -> list[int]:
    """torch pads the last dim first as (begin, end) pairs; ONNX lists all begins then ends."""
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(torch_pad) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = torch_pad[2 * i], torch_pad[2 * i + 1]
    return begins + ends


@LOWERINGS.register("F.pad", "nn.ZeroPad1d", "nn.ZeroPad2d", "nn.ZeroPad3d", "nn.ConstantPad1d",
                    "nn.ConstantPad2d", "nn.ConstantPad3d", "nn.ReflectionPad1d", "nn.ReflectionPad2d",
                    "nn.ReflectionPad3d", "nn.ReplicationPad1d", "nn.ReplicationPad2d", "nn.ReplicationPad3d",
                    "nn.CircularPad1d", "nn.CircularPad2d", "nn.CircularPad3d")
def pad(ctx, op):
    rank = ctx.rank(op.inputs[0])
    if op.type == "F.pad":
        torch_pad, mode = int_list(op.params["pad"]), op.params.get("mode", "constant")
    else:
        kind = op.type[3:-2]
        mode, n = _PAD_MODULES[kind], int(op.type[-2])
        torch_pad = ints(op.params["padding"], 2 * n, "padding")
    if mode not in _PAD_MODES:
        raise Unsupported(f"mode={mode!r}")
    inputs = [ctx.x(op), ctx.const(_onnx_pads(torch_pad, rank), hint="pads")]
    value = op.params.get("value")
    if _PAD_MODES[mode] == "constant" and value not in (None, 0, 0.0):
        inputs.append(ctx.const(value, ctx.dtype(op.inputs[0]), "pad_value"))
    ctx.node("Pad", inputs, ctx.y(op), mode=_PAD_MODES[mode])
