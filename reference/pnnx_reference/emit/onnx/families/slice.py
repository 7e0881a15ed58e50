"""Slicing: chunk/split/tensor_split -> Split, unbind -> Split + Squeeze, slice/narrow -> Slice,
select -> Gather, slice_copy/slice_scatter (a write into a slice) -> ScatterND."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import INT64_MAX, axis, int_list, ints
from ..dtypes import onnx_type
from ..registry import LOWERINGS

INT_MAX = 2147483647


def _split_sizes(ctx, op, dim: int) -> list[int]:
    sizes = [ctx.shape(o)[dim] for o in op.outputs]
    if any(s < 0 for s in sizes):
        raise Unsupported("split of a dynamic dimension")
    return sizes


@LOWERINGS.register("torch.chunk", "Tensor.chunk", "torch.split", "Tensor.split", "torch.tensor_split",
                    "Tensor.tensor_split")
def split(ctx, op):
    dim = axis(int(op.params.get("dim", 0)), ctx.rank(op.inputs[0]))
    sizes = _split_sizes(ctx, op, dim)
    ctx.node("Split", [ctx.x(op), ctx.const(sizes, hint="split")], [o.name for o in op.outputs], axis=dim)


@LOWERINGS.register("torch.unbind", "Tensor.unbind")
def unbind(ctx, op):
    dim = axis(int(op.params.get("dim", 0)), ctx.rank(op.inputs[0]))
    parts = ctx.node("Split", [ctx.x(op), ctx.const([1] * len(op.outputs), hint="split")],
                   len(op.outputs), axis=dim)
    parts = parts if isinstance(parts, list) else [parts]
    axes = ctx.const([dim], hint="axes")
    for part, out in zip(parts, op.outputs):
        ctx.node("Squeeze", [part, axes], out.name)


def _slice_params(op):
    p = op.params
    if "dims" in p:
        n = len(int_list(p["dims"]))
        return (int_list(p["dims"]), ints(p.get("starts", 0), n), ints(p.get("ends", INT_MAX), n),
                ints(p.get("steps", 1), n), ints(p.get("selects", INT_MAX), n))
    for key in ("dim", "start", "end", "step"):
        if key in p and not isinstance(p[key], int) and p[key] is not None:
            raise Unsupported(f"{key}={p[key]!r} is not a constant int")
    start = p.get("start", 0)
    end = p.get("end", INT_MAX)
    return ([p["dim"]], [0 if start is None else start], [INT_MAX if end is None else end],
            [p.get("step", 1) or 1], [p.get("select", INT_MAX)])


def _tensor_bounds(ctx, op) -> None:
    """x[:, a:b] with a bound computed from sizes (an operand, the int a pnnx.Expression gives):
    one Slice whose starts/ends are read at run time."""
    if "dims" in op.params:
        raise Unsupported("a multi-dim slice with bounds given as tensors")
    rank = ctx.rank(op.inputs[0])
    dim = axis(int(op.params.get("dim", 0)), rank)
    step = op.params.get("step", 1) or 1
    if not isinstance(step, int) or op.params.get("select", INT_MAX) != INT_MAX:
        raise Unsupported("a slice bound given as a tensor with a step or select that is no constant int")

    def bound(key: str, default: int) -> str:
        operand = op.input(key)
        if operand is None:
            value = op.params.get(key, default)
            if not isinstance(value, int) and value is not None:
                raise Unsupported(f"{key}={value!r} is not a constant int")
            value = default if value is None else value
            return ctx.const([INT64_MAX if value >= INT_MAX else value], hint=f"{key}s")
        name = operand.name if operand.dtype in (None, "i64") else ctx.node("Cast", [operand.name], to=onnx_type("i64"))
        return ctx.node("Reshape", [name, ctx.const([1], hint="shape")])

    ctx.node("Slice", [ctx.x(op), bound("start", 0), bound("end", INT_MAX), ctx.const([dim], hint="axes"),
                     ctx.const([step], hint="steps")], ctx.y(op))


@LOWERINGS.register("Tensor.slice", "torch.slice_copy")
def slice_(ctx, op):
    if len(op.inputs) > 1:
        _tensor_bounds(ctx, op)
        return
    dims, starts, ends, steps, selects = _slice_params(op)
    rank = ctx.rank(op.inputs[0])
    dims = [axis(d, rank) for d in dims]
    picked = [d for d, s in zip(dims, selects) if s != INT_MAX]
    if len(dims) == 1 and picked:  # x[:, i]: one Gather drops the dim
        ctx.node("Gather", [ctx.x(op), ctx.const(selects[0], hint="index")], ctx.y(op), axis=dims[0])
        return
    for i, s in enumerate(selects):
        if s != INT_MAX:  # a select is a one-element slice, squeezed below
            starts[i], ends[i], steps[i] = s, (s + 1 if s != -1 else INT64_MAX), 1
    ends = [INT64_MAX if e >= INT_MAX else e for e in ends]
    inputs = [ctx.x(op), ctx.const(starts, hint="starts"), ctx.const(ends, hint="ends"),
              ctx.const(dims, hint="axes"), ctx.const(steps, hint="steps")]
    if not picked:
        ctx.node("Slice", inputs, ctx.y(op))
        return
    ctx.node("Squeeze", [ctx.node("Slice", inputs), ctx.const(picked, hint="axes")], ctx.y(op))


def _written_box(shape, dims, starts, ends, steps, selects) -> list[range]:
    """Per input dim, the indices a slice write covers (a select covers one)."""
    box = [range(n) for n in shape]
    for dim, start, end, step, sel in zip(dims, starts, ends, steps, selects):
        n = shape[dim]
        if sel != INT_MAX:
            sel = sel + n if sel < 0 else sel
            box[dim] = range(sel, sel + 1)
        else:
            box[dim] = range(*slice(start, None if end >= INT_MAX else end, step).indices(n))
    return box


@LOWERINGS.register("Tensor.slice_copy", "torch.slice_scatter")
def slice_copy(ctx, op):
    """`x[..., a:b:s] = y` (and slice_scatter) as ScatterND: constant indices over the dims up to the last one
    written (the trailing dims go whole), the value broadcast to the written box."""
    src = op.input("src", 1)
    shape = ctx.shape(op.inputs[0])
    if src is None or min(shape, default=0) < 0:
        raise Unsupported("needs a src operand and a static input shape")
    dims, starts, ends, steps, selects = _slice_params(op)
    dims = [axis(d, len(shape)) for d in dims]
    box = _written_box(shape, dims, starts, ends, steps, selects)
    if not dims or min(len(r) for r in box) == 0:  # x[...] = y writes the whole of x; x[0:0] = y nothing
        raise Unsupported("a write into the whole tensor or an empty slice is not lowered")
    lead = max(dims) + 1
    grid = np.stack(np.meshgrid(*box[:lead], indexing="ij"), axis=-1).astype(np.int64)
    picked = {d for d, s in zip(dims, selects) if s != INT_MAX}
    updates = _box_updates(ctx, op, src, [len(r) for r in box], picked)
    ctx.node("ScatterND", [ctx.x(op), ctx.const(grid, hint="indices"), updates], ctx.y(op))


def _box_updates(ctx, op, src, full: list[int], picked: set[int]) -> str:
    """src in input's dtype, broadcast to the slice's shape, then with the selected dims put
    back as 1s."""
    name = src.name
    if ctx.dtype(src) != ctx.dtype(op.inputs[0]):
        name = ctx.node("Cast", [name], to=onnx_type(ctx.dtype(op.inputs[0])))
    view = [n for i, n in enumerate(full) if i not in picked]
    if ctx.rank(src) > len(view):  # torch drops the value's extra leading 1s
        name = ctx.node("Reshape", [name, ctx.const(view, hint="shape")])
    name = ctx.node("Expand", [name, ctx.const(view, hint="shape")])
    return name if view == full else ctx.node("Reshape", [name, ctx.const(full, hint="shape")])


@LOWERINGS.register("Tensor.select", "torch.select")
def select(ctx, op):
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    ctx.node("Gather", [ctx.x(op), ctx.const(int(op.params["index"]), hint="index")], ctx.y(op), axis=dim)


@LOWERINGS.register("torch.narrow", "Tensor.narrow")
def narrow(ctx, op):
    start, length = op.params.get("start"), op.params.get("length")
    if not isinstance(start, int) or not isinstance(length, int):
        raise Unsupported("start and length must be constant ints")
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    if start < 0:
        start += ctx.shape(op.inputs[0])[dim]
    ctx.node("Slice", [ctx.x(op), ctx.const([start], hint="starts"), ctx.const([start + length], hint="ends"),
                     ctx.const([dim], hint="axes")], ctx.y(op))
