"""Convolutions: nn.ConvNd / nn.ConvTransposeNd / F.convNd / F.conv_transposeNd -> Conv,
ConvTranspose. Non-zero padding modes get one Pad in front (ONNX Conv pads with zeros).
Unbatched input ((C, L) for Conv1d, ...) is a batch of one (see unbatched.py)."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import ints
from ..registry import LOWERINGS

_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _spatial(op_type: str) -> int:
    return int(op_type.rstrip("d")[-1])


def _unbatched_rank(op) -> int:
    return _spatial(op.type) + 1


def _check_rank(ctx, op, n: int) -> None:
    if ctx.rank(op.inputs[0]) != n + 2:
        raise Unsupported(f"input of rank {ctx.rank(op.inputs[0])} (expected {n + 1} or {n + 2})")


def _pads(op, n: int, kernel: list[int], dilation: list[int]) -> list[int]:
    padding = op.params.get("padding", 0)
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":  # torch puts the odd extra element at the end
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    p = ints(padding, n, "padding")
    return p + p


def _weight_and_bias(ctx, op):
    if op.type.startswith("nn."):
        weight = ctx.attr_weight(op, "weight")
        bias = ctx.attr_weight(op, "bias") if "bias" in op.attrs else None
        return weight, bias, list(op.attrs["weight"].shape)
    w = op.input("weight", 1)
    bias = op.input("bias", 2)
    if w is None:
        raise Unsupported("no weight input")
    return w.name, (bias.name if bias is not None else None), ctx.shape(w)


def _padded_input(ctx, op, pads: list[int]) -> tuple[str, list[int]]:
    mode = op.params.get("padding_mode", "zeros") or "zeros"
    if mode == "zeros" or not any(pads):
        return ctx.x(op), pads
    if mode not in _PAD_MODES:
        raise Unsupported(f"padding_mode={mode!r}")
    n = len(pads) // 2
    full = [0, 0] + pads[:n] + [0, 0] + pads[n:]
    padded = ctx.node("Pad", [ctx.x(op), ctx.const(full, hint="pads")], 1, mode=_PAD_MODES[mode])
    return padded, [0] * len(pads)


@LOWERINGS.register("nn.Conv1d", "nn.Conv2d", "nn.Conv3d", "F.conv1d", "F.conv2d", "F.conv3d",
                    unbatched_rank=_unbatched_rank)
def conv(ctx, op):
    n = _spatial(op.type)
    weight, bias, wshape = _weight_and_bias(ctx, op)
    kernel = wshape[2:]
    _check_rank(ctx, op, n)
    dilation = ints(op.params.get("dilation", 1), n, "dilation")
    data, pads = _padded_input(ctx, op, _pads(op, n, kernel, dilation))
    ctx.node("Conv", [data, weight] + ([bias] if bias else []), ctx.y(op),
           kernel_shape=kernel, strides=ints(op.params.get("stride", 1), n, "stride"),
           pads=pads, dilations=dilation, group=int(op.params.get("groups", 1)))


@LOWERINGS.register("nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d", "F.conv_transpose1d",
                    "F.conv_transpose2d", "F.conv_transpose3d", unbatched_rank=_unbatched_rank)
def conv_transpose(ctx, op):
    n = _spatial(op.type)
    weight, bias, wshape = _weight_and_bias(ctx, op)
    _check_rank(ctx, op, n)
    if (op.params.get("padding_mode", "zeros") or "zeros") != "zeros":
        raise Unsupported("ConvTranspose supports padding_mode='zeros' only")
    p = ints(op.params.get("padding", 0), n, "padding")
    stride = ints(op.params.get("stride", 1), n, "stride")
    dilation = ints(op.params.get("dilation", 1), n, "dilation")
    out_pad = _output_padding(ctx, op, wshape[2:], stride, p, dilation)
    ctx.node("ConvTranspose", [ctx.x(op), weight] + ([bias] if bias else []), ctx.y(op),
           kernel_shape=wshape[2:], strides=stride, pads=p + p, dilations=dilation,
           output_padding=out_pad, group=int(op.params.get("groups", 1)))


def _output_padding(ctx, op, kernel, stride, pad, dilation) -> list[int]:
    """From the output shape where known: a forward(output_size=...) call changes it."""
    n = len(kernel)
    given = ints(op.params.get("output_padding", 0), n, "output_padding")
    ins, outs = ctx.shape(op.inputs[0])[2:], ctx.shape(op.outputs[0])[2:]
    if any(d < 0 for d in ins + outs):
        return given
    return [o - ((i - 1) * s - 2 * p + d * (k - 1) + 1)
            for i, o, s, p, d, k in zip(ins, outs, stride, pad, dilation, kernel)]
