"""Indexing: index_select, gather, Tensor.index (advanced indexing), masked_select,
index_put, scatter_add, as_strided -> Gather/GatherElements/GatherND, Compress,
ScatterND/ScatterElements."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ....errors import Unsupported
from ..builder import axis, static
from ..registry import LOWERINGS


@LOWERINGS.register("torch.index_select", "Tensor.index_select")
def index_select(ctx, op):
    index = op.input("index", 1)
    if index is None:
        raise Unsupported("no index operand")
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    ctx.node("Gather", [ctx.x(op), index.name], ctx.y(op), axis=dim)


@LOWERINGS.register("torch.scatter_add", "Tensor.scatter_add")
def scatter_add(ctx, op):
    index, src = op.input("index", 1), op.input("src", 2)
    if index is None or src is None:
        raise Unsupported("needs index and src operands")
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    updates = src.name
    want, have = ctx.shape(index), ctx.shape(src)
    if want != have:  # torch reads only the index-shaped corner of a larger src
        if min(want + have) < 0:
            raise Unsupported("src larger than index with dynamic sizes")
        n = len(want)
        updates = ctx.node("Slice", [updates, ctx.const([0] * n, hint="starts"),
                                   ctx.const(want, hint="ends"), ctx.const(list(range(n)), hint="axes")])
    ctx.node("ScatterElements", [ctx.x(op), index.name, updates], ctx.y(op), axis=dim, reduction="add")


@LOWERINGS.register("torch.gather", "Tensor.gather")
def gather(ctx, op):
    index = op.input("index", 1)
    dim = axis(int(op.params["dim"]), ctx.rank(op.inputs[0]))
    ctx.node("GatherElements", [ctx.x(op), index.name], ctx.y(op), axis=dim)


def _flat_compress(ctx, data, mask, shape, out):
    """Elements of `data` where `mask` (both broadcast to `shape`) is true, flattened."""
    full = ctx.const(shape, hint="shape")
    flat = ctx.const([-1], hint="shape")
    values = ctx.node("Reshape", [ctx.node("Expand", [data, full]), flat])
    keep = ctx.node("Reshape", [ctx.node("Expand", [mask, full]), flat])
    ctx.node("Compress", [values, keep], out, axis=0)


def _index_entries(op):
    expr = str(op.params.get("expr", "")).strip()
    if not (expr.startswith("[") and expr.endswith("]")):
        raise Unsupported(f"index expression {expr!r}")
    entries = [e.strip() for e in expr[1:-1].split(",")]
    if any(e != "None" and not e.startswith("@") for e in entries):
        raise Unsupported(f"index expression {expr!r}")
    return entries


@LOWERINGS.register("Tensor.index")
def tensor_index(ctx, op):
    entries = _index_entries(op)
    used = [(axis, op.inputs[int(e[1:])]) for axis, e in enumerate(entries) if e != "None"]
    if len(used) == 1 and ctx.dtype(used[0][1]) == "bool":
        _index_mask(ctx, op, *used[0])
    elif len(used) == 1:
        axis, index = used[0]
        ctx.node("Gather", [ctx.x(op), index.name], ctx.y(op), axis=axis)
    elif [a for a, _ in used] == list(range(len(used))):
        _index_leading(ctx, op, [index for _, index in used])
    else:
        raise Unsupported("several index tensors not on the leading axes")


def _index_mask(ctx, op, axis, mask):
    shape = ctx.shape(op.inputs[0])
    if axis != 0 or ctx.shape(mask) != shape:
        raise Unsupported("boolean index must cover the whole input")
    _flat_compress(ctx, ctx.x(op), mask.name, static(shape, "input shape"), ctx.y(op))


def _index_leading(ctx, op, indices):
    """x[i, j, ...] on the leading axes: GatherND on the broadcast index tuples. Sizes that
    follow the input (an index built from arange(length), transformers' mask functions
    reading position_ids[batch, q]) are taken at run time."""
    if any(ctx.dtype(i) == "bool" for i in indices):
        raise Unsupported("boolean index among several indices")
    last = ctx.const([-1])
    parts = [ctx.node("Unsqueeze", [expanded, last]) for expanded in _broadcast(ctx, indices)]
    tuples = ctx.node("Concat", parts, axis=-1)
    # GatherND takes no negative indices: wrap each by its axis size
    sizes = _leading_sizes(ctx, op.inputs[0], len(indices))
    wrapped = ctx.node("Mod", [ctx.node("Add", [tuples, sizes]), sizes])
    ctx.node("GatherND", [ctx.x(op), wrapped], ctx.y(op))


def _broadcast(ctx, indices) -> list[str]:
    """The index tensors expanded to their broadcast shape (from a zero tensor of that shape
    when a size follows the input), as int64."""
    names = [i.name if ctx.dtype(i) == "i64" else ctx.node("Cast", [i.name], to=TensorProto.INT64) for i in indices]
    shapes = [ctx.shape(i) for i in indices]
    if all(s is not None and -1 not in s for s in shapes):
        dims = ctx.const(list(np.broadcast_shapes(*[tuple(s) for s in shapes])), hint="shape")
    else:
        zero = ctx.const(0)
        zeros = [ctx.node("Mul", [name, zero]) for name in names]
        total = zeros[0]
        for more in zeros[1:]:
            total = ctx.node("Add", [total, more])
        dims = ctx.node("Shape", [total])
    return [ctx.node("Expand", [name, dims]) for name in names]


def _leading_sizes(ctx, data, count: int) -> str:
    shape = ctx.shape(data)
    if shape is not None and -1 not in shape[:count]:
        return ctx.const(shape[:count])
    return ctx.node("Shape", [data.name], start=0, end=count)


@LOWERINGS.register("torch.masked_select", "Tensor.masked_select")
def masked_select(ctx, op):
    mask = op.input("mask", 1)
    if mask is None:
        raise Unsupported("no mask input")
    shape = np.broadcast_shapes(tuple(ctx.shape(op.inputs[0])), tuple(ctx.shape(mask)))
    _flat_compress(ctx, ctx.x(op), mask.name, static(list(shape), "shapes"), ctx.y(op))


# --- Tensor.index_put: ScatterND over the leading dims ----------------------------------------
def _index_put_mask(ctx, op, data, mask, values) -> None:
    """data[mask] = scalar: a Where (a non-scalar value needs the mask's nonzero count)."""
    if op.params.get("accumulate") or values.shape is None or int(np.prod(values.shape)) != 1:
        raise Unsupported("boolean-mask index_put needs one value and accumulate=False")
    value = ctx.node("CastLike", [values.name, data.name])
    if values.shape:
        value = ctx.node("Reshape", [value, ctx.const([], hint="shape")])
    ctx.node("Where", [mask.name, value, data.name], ctx.y(op))


def _scatter_indices(ctx, indices, dims: list[int]) -> str:
    """The index tensors (as int64, negatives wrapped) stacked on a new last axis, as
    ScatterND wants."""
    last = ctx.const([-1], hint="axes")
    columns = []
    for operand, dim in zip(indices, dims):
        index = operand.name if ctx.dtype(operand) == "i64" else \
            ctx.node("Cast", [operand.name], to=TensorProto.INT64)
        wrapped = ctx.node("Where", [ctx.node("Less", [index, ctx.const(0)]),
                                   ctx.node("Add", [index, ctx.const(dim)]), index])
        columns.append(ctx.node("Unsqueeze", [wrapped, last]))
    return columns[0] if len(columns) == 1 else ctx.node("Concat", columns, axis=-1)


@LOWERINGS.register("Tensor.index_put")
def index_put(ctx, op):
    data, values = op.inputs[0], op.inputs[-1]
    indices = op.inputs[1:-1]
    shape = ctx.shape(data)
    if not indices or any(i.shape is None for i in indices) or shape is None or -1 in shape:
        raise Unsupported("needs static shapes")
    if len(indices) == 1 and ctx.dtype(indices[0]) == "bool":
        return _index_put_mask(ctx, op, data, indices[0], values)
    if any(ctx.dtype(i) not in ("i64", "i32") for i in indices) or \
            any(i.shape != indices[0].shape for i in indices):
        raise Unsupported("index tensors must be integer and of one shape")
    where = _scatter_indices(ctx, indices, shape)
    target = list(indices[0].shape) + shape[len(indices):]
    value = ctx.node("CastLike", [values.name, data.name])
    update = ctx.node("Expand", [value, ctx.const(target, hint="shape")])
    reduction = "add" if op.params.get("accumulate") else None
    ctx.node("ScatterND", [data.name, where, update], ctx.y(op), reduction=reduction)


# --- torch.as_strided: a Gather of the strided positions from the flattened input -----------
def _strided_positions(size: list[int], stride: list[int], offset: int) -> np.ndarray:
    positions = np.full(size, offset, np.int64)
    for dim, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        positions = positions + (np.arange(n, dtype=np.int64) * step).reshape(shape)
    return positions


@LOWERINGS.register("torch.as_strided", "Tensor.as_strided")
def as_strided(ctx, op):
    size, stride = [int(s) for s in op.params["size"]], [int(s) for s in op.params["stride"]]
    offset = int(op.params.get("storage_offset") or 0)
    if len(size) != len(stride):
        raise Unsupported("size and stride of different lengths")
    numel = int(np.prod(static(ctx.shape(op.inputs[0]), "input shape")))
    positions = _strided_positions(size, stride, offset)
    if positions.size and not 0 <= positions.min() <= positions.max() < numel:
        raise Unsupported("strided view reaches outside the input")
    flat = ctx.node("Reshape", [ctx.x(op), ctx.const([-1], hint="shape")])
    ctx.node("Gather", [flat, ctx.const(positions, hint="positions")], ctx.y(op), axis=0)


@LOWERINGS.register("torch.nonzero", "Tensor.nonzero", "torch.argwhere", "Tensor.argwhere")
def nonzero(ctx, op):
    """NonZero gives (rank, n) indices; torch gives (n, rank), or a tuple of n-long rows."""
    found = ctx.node("NonZero", [ctx.x(op)])
    if not op.params.get("as_tuple"):
        ctx.node("Transpose", [found], ctx.y(op), perm=[1, 0])
        return
    for i in range(len(op.outputs)):
        ctx.node("Gather", [found, ctx.const(i, hint="row")], ctx.y(op, i), axis=0)
