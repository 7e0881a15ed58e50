"""Cumulative operations: cumsum -> CumSum; cumprod as one masked ReduceProd (ONNX has no
CumProd); diff, cumsum's inverse, as Slice and Sub (Xor on booleans)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import axis, static
from ..promote import in_output_dtype
from ..registry import LOWERINGS


@LOWERINGS.register("torch.cumsum", "Tensor.cumsum")
def cumsum(ctx, op):
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    ctx.node("CumSum", [in_output_dtype(ctx, op), ctx.const(dim, hint="axis")], ctx.y(op))


# --- torch.cumprod: out[i] = prod over j <= i of x[j], as one masked ReduceProd --------------
_MAX_CUMPROD_ELEMENTS = 1 << 24  # the masked copy has L times the input's elements


@LOWERINGS.register("torch.cumprod", "Tensor.cumprod")
def cumprod(ctx, op):
    """x gets a new axis i before dim; entries with j > i are replaced by 1, then the product
    over j. Exact products (no log/exp), L times the memory: meant for moderate L."""
    shape = static(ctx.shape(op.inputs[0]), "input shape")
    if not shape:
        ctx.node("Identity", [in_output_dtype(ctx, op)], ctx.y(op))
        return
    dim = axis(int(op.params["dim"]), len(shape))
    length = shape[dim]
    if int(np.prod(shape)) * length > _MAX_CUMPROD_ELEMENTS:
        raise Unsupported(f"length {length} along dim makes the masked copy too large")
    dtype = ctx.dtype(op.outputs[0])
    x = ctx.node("Unsqueeze", [in_output_dtype(ctx, op), ctx.const([dim], hint="axes")])
    mask = np.tril(np.ones((length, length), bool)).reshape(
        (length, length) + (1,) * (len(shape) - dim - 1))
    masked = ctx.node("Where", [ctx.const(mask, "bool", "lower"), x, ctx.const(1, dtype, "one")])
    ctx.node("ReduceProd", [masked, ctx.const([dim + 1], hint="axes")], ctx.y(op), keepdims=0)


# --- torch.diff: x[1:] - x[:-1] along dim, n times, after prepend/append are concatenated ---
_END = np.iinfo(np.int64).max


@LOWERINGS.register("torch.diff", "Tensor.diff")
def diff(ctx, op):
    """Slices from the run-time length: a length that follows the input (transformers'
    packed-sequence check on the position ids, torch.diff(position_ids, prepend=...)) works."""
    dim = axis(int(op.params.get("dim", -1)), ctx.rank(op.inputs[0]))
    x = ctx.x(op)
    prepend, append = op.input("prepend"), op.input("append")
    if prepend is not None or append is not None:
        parts = [o.name for o in (prepend,) if o is not None] + [x] + [o.name for o in (append,) if o is not None]
        x = ctx.node("Concat", parts, axis=dim)
    where = ctx.const([dim], hint="axes")
    subtract = "Xor" if ctx.dtype(op.outputs[0]) == "bool" else "Sub"
    steps = int(op.params.get("n", 1))
    for step in range(steps):
        later = ctx.node("Slice", [x, ctx.const([1], hint="starts"), ctx.const([_END], hint="ends"), where])
        earlier = ctx.node("Slice", [x, ctx.const([0], hint="starts"), ctx.const([-1], hint="ends"), where])
        x = ctx.node(subtract, [later, earlier], ctx.y(op) if step == steps - 1 else 1)
    if steps == 0:
        ctx.node("Identity", [x], ctx.y(op))
