"""F.fold / nn.Fold -> Col2Im; F.unfold / nn.Unfold (im2col) -> a grouped Conv whose constant
kernel picks one window position per output channel."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import ints, static
from ..dtypes import numpy_type
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Fold", "F.fold", unbatched_rank=2)  # (C * prod(kernel), L)
def fold(ctx, op):
    size = ints(op.params["output_size"], 2, "output_size")
    kernel = ints(op.params["kernel_size"], 2, "kernel_size")
    if ctx.rank(op.inputs[0]) != 3:
        raise Unsupported(f"input of rank {ctx.rank(op.inputs[0])} (expected 2 or 3)")
    pad = ints(op.params.get("padding", 0), 2, "padding")
    ctx.node("Col2Im", [ctx.x(op), ctx.const(size, hint="image_shape"), ctx.const(kernel, hint="block")],
           ctx.y(op), dilations=ints(op.params.get("dilation", 1), 2, "dilation"), pads=pad + pad,
           strides=ints(op.params.get("stride", 1), 2, "stride"))


@LOWERINGS.register("F.unfold", "nn.Unfold", unbatched_rank=3)
def unfold(ctx, op):
    """im2col as a grouped Conv whose kernel picks one window position per output channel."""
    if ctx.rank(op.inputs[0]) != 4 or not ctx.is_float(op.inputs[0]):
        raise Unsupported("needs 3-D or 4-D float input")
    c = static(ctx.shape(op.inputs[0])[-3:-2], "channels")[0]
    kh, kw = ints(op.params["kernel_size"], 2, "kernel_size")
    kernel = np.zeros((c * kh * kw, 1, kh, kw), numpy_type(ctx.dtype(op.inputs[0])))
    for o in range(c * kh * kw):
        kernel[o, 0, (o % (kh * kw)) // kw, o % kw] = 1
    pad = ints(op.params.get("padding", 0), 2, "padding")
    cols = ctx.node("Conv", [ctx.x(op), ctx.const(kernel, ctx.dtype(op.inputs[0]), f"{op.name}.onehot")],
                  kernel_shape=[kh, kw], group=c, pads=pad + pad,
                  strides=ints(op.params.get("stride", 1), 2, "stride"),
                  dilations=ints(op.params.get("dilation", 1), 2, "dilation"))
    ctx.node("Reshape", [cols, ctx.const([0, c * kh * kw, -1], hint="shape")], ctx.y(op))


@LOWERINGS.register("Tensor.unfold")
def tensor_unfold(ctx, op):
    """x.unfold(dimension, size, step): the windows' element indices (windows, size) gathered
    along `dimension`, then the `size` axis moved last (torch's new trailing axis)."""
    shape = ctx.shape(op.inputs[0])
    rank, dim = len(shape), int(op.params["dimension"])
    dim = dim % rank if rank else 0
    size, step = int(op.params["size"]), int(op.params["step"])
    length = static(shape[dim:dim + 1], "unfolded dimension")[0] if rank else 1
    windows = (length - size) // step + 1
    if windows < 1 or size < 1 or step < 1:
        raise Unsupported(f"unfold of {length} elements by {size} every {step}: no window")
    index = np.arange(windows)[:, None] * step + np.arange(size)[None, :]
    if rank == 0:  # a scalar unfolds to (1,): itself
        ctx.node("Reshape", [ctx.x(op), ctx.const([1], hint="shape")], ctx.y(op))
        return
    gathered = ctx.node("Gather", [ctx.x(op), ctx.const(index, hint="windows")], axis=dim)
    perm = list(range(dim + 1)) + list(range(dim + 2, rank + 1)) + [dim + 1]
    ctx.node("Transpose", [gathered], ctx.y(op), perm=perm)
