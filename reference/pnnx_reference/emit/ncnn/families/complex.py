"""Complex tensors as (..., 2) real blobs (see complex_blobs.py): view_as_real /
view_as_complex are no-ops, torch.complex concatenates the parts along a new last axis."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, dims_params
from ..registry import LOWERINGS


@LOWERINGS.register("torch.view_as_real", "torch.view_as_complex", batchless=True)
def _complex_view(ctx: Context, op) -> None:
    ctx.alias(op.outputs[0], op.inputs[0])


@LOWERINGS.register("torch.complex", batchless=True)
def _complex(ctx: Context, op) -> None:
    """(real, imag) of the same shape -> a blob with a trailing axis of 2."""
    out = op.outputs[0]
    shape = ctx.shape(op.inputs[0])
    if ctx.shape(op.inputs[1]) != shape:
        raise Unsupported("torch.complex of differently shaped parts (broadcast) is not lowered")
    if len(shape) + 1 > 4:
        raise Unsupported(f"complex result of ncnn rank {len(shape) + 1} > 4")
    parts = []
    for part in op.inputs[:2]:
        column = ctx.temp(out.name)
        ctx.emit("Reshape", "complex", [ctx.blob(part)], [column], dims_params(shape + [1]))
        parts.append(column)
    ctx.emit("Concat", "complex", parts, [out.name], {0: len(shape)})
