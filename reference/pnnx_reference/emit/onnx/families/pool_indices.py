"""Max pooling that returns indices, and its inverse max_unpool.

torch's indices count within each (n, c) plane; ONNX MaxPool's count over the whole
N*C*spatial tensor, so the pooled indices are reduced modulo the plane size. Unpooling
scatters each plane into a zero plane (ScatterElements on the flattened spatial axis),
which keeps torch's per-plane convention without rebuilding global offsets."""
from __future__ import annotations

import math
import re

from ..builder import ints
from ..registry import Unsupported, lowering
from .pool import _check_batched, _n, _window


def _static(shape, what):
    if any(d < 0 for d in shape):
        raise Unsupported(f"needs static {what}")
    return shape


@lowering("F.max_pool1d_with_indices", "F.max_pool2d_with_indices", "F.max_pool3d_with_indices")
def max_pool_with_indices(b, op):
    n = int(re.search(r"pool(\d)d", op.type.lower()).group(1))  # F.max_pool2d_with_indices, nn.MaxPool2d
    _check_batched(b, op, n)
    kernel, stride, pads = _window(op, n)
    plane = math.prod(_static(b.shape(op.inputs[0])[2:], "spatial sizes"))
    outs = [b.y(op)] + ([b.y(op, 1)] if len(op.outputs) > 1 else [])
    flat = b.fresh(f"{op.name}_flat_indices") if len(outs) > 1 else None
    b.node("MaxPool", [b.x(op)], outs[:1] + ([flat] if flat else []), kernel_shape=kernel,
           strides=stride, pads=pads, dilations=ints(op.params.get("dilation", 1), n, "dilation"),
           ceil_mode=int(bool(op.params.get("ceil_mode", False))))
    if flat:
        b.node("Mod", [flat, b.const(plane)], outs[1])


@lowering("F.max_unpool1d", "F.max_unpool2d", "F.max_unpool3d", "nn.MaxUnpool1d",
          "nn.MaxUnpool2d", "nn.MaxUnpool3d")
def max_unpool(b, op):
    n = _n(op.type)
    _check_batched(b, op, n)
    indices = b.named_input(op, "indices", 1)
    if indices is None:
        raise Unsupported("no indices input")
    lead = _static(b.shape(op.outputs[0]), "output shape")[:2]
    out_plane = math.prod(b.shape(op.outputs[0])[2:])
    flat_shape = b.const(lead + [-1], hint="shape")
    values = b.node("Reshape", [b.x(op), flat_shape])
    where = b.node("Reshape", [indices.name, flat_shape])
    zeros = b.node("Expand", [b.const(0.0, b.dtype(op.inputs[0]), "zero"),
                              b.const(lead + [out_plane], hint="shape")])
    scattered = b.node("ScatterElements", [zeros, where, values], axis=2)
    b.node("Reshape", [scattered, b.const(b.shape(op.outputs[0]), hint="shape")], b.y(op))
