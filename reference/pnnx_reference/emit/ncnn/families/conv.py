"""Convolution and transposed convolution (1-D, 2-D, 3-D, grouped/depthwise)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..context import Context, as_list, param
from ..layers import Weight
from ..padding import padding_params
from ..registry import FIRST, LOWERINGS

# ncnn param ids per spatial axis, innermost (w) first
KERNEL, DILATION, STRIDE, PAD = (1, 11, 21), (2, 12, 22), (3, 13, 23), (4, 14, 24)

PADDING_MODES = ("reflect", "replicate")

SUFFIX = {1: "1D", 2: "", 3: "3D"}


def _spatial(value, n: int) -> list[int]:
    """A torch (d, h, w) tuple as ncnn (w, h, d) order."""
    return [int(v) for v in reversed(as_list(value, n))]


def _weights(ctx: Context, op, name: str, position: int):
    """A conv weight/bias: the module attr, or a constant F.conv* input."""
    if name in op.attrs:
        return op.attrs[name].to_numpy().astype(np.float32, copy=False)
    if op.type.startswith("nn."):
        return None
    return ctx.constant_input(op, name, position)


def _geometry(op, n: int, transposed: bool) -> dict[int, object]:
    p: dict[int, object] = {}
    ks = _spatial(param(op, "kernel_size"), n) if "kernel_size" in op.params else None
    for i, (k, d, s) in enumerate(zip(ks or [None] * n, _spatial(param(op, "dilation", 1), n),
                                      _spatial(param(op, "stride", 1), n))):
        if k is not None:
            p[KERNEL[i]] = k
        p[DILATION[i]], p[STRIDE[i]] = d, s
    padding = param(op, "padding", 0)
    if padding == "same":
        p[PAD[0]] = -233
    elif padding == "valid":
        p[PAD[0]] = 0
    else:
        for i, v in enumerate(_spatial(padding, n)):
            p[PAD[i]] = v
    if transposed:  # every axis written: ncnn defaults output_pad_bottom/behind to output_pad_right
        for i, v in enumerate(_spatial(param(op, "output_padding", 0), n)):
            p[18 + i] = v
    return p


def _lower(ctx: Context, op, n: int, transposed: bool) -> None:
    run_time = [_computed(ctx, op.input(name, i)) for name, i in (("weight", 1), ("bias", 2))]
    if not op.type.startswith("nn.") and any(run_time):
        _dynamic_weight(ctx, op, n, transposed)
        return
    weight = _weights(ctx, op, "weight", 1)
    bias = _weights(ctx, op, "bias", 2)
    _check_rank(ctx, op, n)
    groups = int(param(op, "groups", 1))
    if transposed:  # torch (in, out/g, k...) -> ncnn (g, out/g, in/g, k...)
        cin, cout_g = weight.shape[:2]
        k = weight.shape[2:]
        weight = weight.reshape(groups, cin // groups, cout_g, *k).swapaxes(1, 2)
        cout = cout_g * groups
    else:
        cout = weight.shape[0]
    p = {0: int(cout), **_geometry(op, n, transposed)}
    for i, k in enumerate(reversed(weight.shape[-n:])):
        p[KERNEL[i]] = int(k)
    p[5] = int(bias is not None)
    p[6] = int(weight.size)
    layer_type, prefix = _layer(transposed, groups, n)
    if groups > 1:
        p[7] = groups
    src = ctx.blob(op.inputs[0])
    mode = param(op, "padding_mode", "zeros")
    if mode not in ("zeros", None):
        src = _explicit_padding(ctx, op, p, n, mode, src)
    weights = [Weight(np.ascontiguousarray(weight).reshape(-1), tagged=True)]
    if bias is not None:
        weights.append(Weight(bias.reshape(-1), tagged=False))
    ctx.emit(layer_type, prefix, [src], [op.outputs[0].name], p, weights)


def _check_rank(ctx: Context, op, n: int) -> None:
    if ctx.rank(op.inputs[0]) != n + 1:
        raise Unsupported(f"input rank {len(ctx.torch_shape(op.inputs[0]))} is not batch + {n + 1} "
                          "(unbatched convolution input)")


def _layer(transposed: bool, groups: int, n: int) -> tuple[str, str]:
    """The ncnn layer type and name prefix."""
    depthwise = groups > 1
    layer_type = ("Deconvolution" if transposed else "Convolution") + ("DepthWise" if depthwise else "") + SUFFIX[n]
    prefix = ("deconv" if transposed else "conv") + ("dw" if depthwise else "") + SUFFIX[n].lower()
    return layer_type, prefix


def _computed(ctx: Context, operand) -> bool:
    return operand is not None and ctx.constant(operand) is None


def _dynamic_weight(ctx: Context, op, n: int, transposed: bool) -> None:
    """A weight or bias computed at run time (a graph input, an expression): the 1-d and 2-d
    (De)Convolution(DepthWise) layers with dynamic_weight (19; 28 for Deconvolution) read the
    weight as a second blob holding the torch layout as is ((out, in/g, k...), transposed
    (in, out/g, k...)), the bias (if any) as a third; a constant one becomes a MemoryData."""
    if n == 3:
        raise Unsupported("a run-time weight of a 3-d convolution: ncnn's 3-d convolution layers "
                          "take no dynamic weight")
    _check_rank(ctx, op, n)
    weight, bias = op.input("weight", 1), op.input("bias", 2)
    shape = ctx.torch_shape(weight)
    groups = int(param(op, "groups", 1))
    p = {0: int(shape[1] * groups if transposed else shape[0]), **_geometry(op, n, transposed)}
    for i, k in enumerate(reversed(shape[-n:])):
        p[KERNEL[i]] = int(k)
    p.update({5: int(bias is not None), 6: int(np.prod(shape)), 28 if transposed else 19: 1})
    if groups > 1:
        p[7] = groups
    layer_type, prefix = _layer(transposed, groups, n)
    blobs = [ctx.blob(op.inputs[0]), ctx.blob(weight)] + ([ctx.blob(bias)] if bias is not None else [])
    ctx.emit(layer_type, prefix, blobs, [op.outputs[0].name], p)


def _explicit_padding(ctx: Context, op, p: dict, n: int, mode: str, src: str) -> str:
    """reflect/replicate padding: a Padding layer in front, the convolution pads nothing."""
    if mode not in PADDING_MODES:
        raise Unsupported(f"padding_mode={mode} has no ncnn Padding equivalent")
    if p.get(PAD[0]) == -233:
        raise Unsupported("padding='same' with a non-zero padding_mode")
    pads = [p.get(PAD[i], 0) for i in range(n)]
    p.update({PAD[i]: 0 for i in range(n)})
    if n == 1:
        pads.append(0)  # the (c, w) blob's h pair pads nothing
    out = ctx.temp(op.outputs[0].name)
    ctx.emit("Padding", "pad", [src], [out], padding_params([(v, v) for v in pads], mode))
    return out


def _register(n: int, transposed: bool, *types: str) -> None:
    LOWERINGS.register(*types, batch=FIRST, unbatched_rank=n + 1)(lambda ctx, op: _lower(ctx, op, n, transposed))


_register(1, False, "nn.Conv1d", "F.conv1d")
_register(2, False, "nn.Conv2d", "F.conv2d")
_register(3, False, "nn.Conv3d", "F.conv3d")
_register(1, True, "nn.ConvTranspose1d", "F.conv_transpose1d")
_register(2, True, "nn.ConvTranspose2d", "F.conv_transpose2d")
_register(3, True, "nn.ConvTranspose3d", "F.conv_transpose3d")
