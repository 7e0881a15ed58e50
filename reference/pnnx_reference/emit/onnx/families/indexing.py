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
def index_select(b, op):
    index = op.input("index", 1)
    if index is None:
        raise Unsupported("no index operand")
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    b.node("Gather", [b.x(op), index.name], b.y(op), axis=dim)


@LOWERINGS.register("torch.scatter_add", "Tensor.scatter_add")
def scatter_add(b, op):
    index, src = op.input("index", 1), op.input("src", 2)
    if index is None or src is None:
        raise Unsupported("needs index and src operands")
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    updates = src.name
    want, have = b.shape(index), b.shape(src)
    if want != have:  # torch reads only the index-shaped corner of a larger src
        if min(want + have) < 0:
            raise Unsupported("src larger than index with dynamic sizes")
        n = len(want)
        updates = b.node("Slice", [updates, b.const([0] * n, hint="starts"),
                                   b.const(want, hint="ends"), b.const(list(range(n)), hint="axes")])
    b.node("ScatterElements", [b.x(op), index.name, updates], b.y(op), axis=dim, reduction="add")


@LOWERINGS.register("torch.gather", "Tensor.gather")
def gather(b, op):
    index = op.input("index", 1)
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    b.node("GatherElements", [b.x(op), index.name], b.y(op), axis=dim)


def _flat_compress(b, data, mask, shape, out):
    """Elements of `data` where `mask` (both broadcast to `shape`) is true, flattened."""
    full = b.const(shape, hint="shape")
    flat = b.const([-1], hint="shape")
    values = b.node("Reshape", [b.node("Expand", [data, full]), flat])
    keep = b.node("Reshape", [b.node("Expand", [mask, full]), flat])
    b.node("Compress", [values, keep], out, axis=0)


def _index_entries(op):
    expr = str(op.params.get("expr", "")).strip()
    if not (expr.startswith("[") and expr.endswith("]")):
        raise Unsupported(f"index expression {expr!r}")
    entries = [e.strip() for e in expr[1:-1].split(",")]
    if any(e != "None" and not e.startswith("@") for e in entries):
        raise Unsupported(f"index expression {expr!r}")
    return entries


@LOWERINGS.register("Tensor.index")
def tensor_index(b, op):
    entries = _index_entries(op)
    used = [(axis, op.inputs[int(e[1:])]) for axis, e in enumerate(entries) if e != "None"]
    if len(used) == 1 and b.dtype(used[0][1]) == "bool":
        _index_mask(b, op, *used[0])
    elif len(used) == 1:
        axis, index = used[0]
        b.node("Gather", [b.x(op), index.name], b.y(op), axis=axis)
    elif [a for a, _ in used] == list(range(len(used))):
        _index_leading(b, op, [index for _, index in used])
    else:
        raise Unsupported("several index tensors not on the leading axes")


def _index_mask(b, op, axis, mask):
    shape = b.shape(op.inputs[0])
    if axis != 0 or b.shape(mask) != shape:
        raise Unsupported("boolean index must cover the whole input")
    _flat_compress(b, b.x(op), mask.name, static(shape, "input shape"), b.y(op))


def _index_leading(b, op, indices):
    """x[i, j, ...] on the leading axes: GatherND on the broadcast index tuples."""
    if any(b.dtype(i) == "bool" for i in indices):
        raise Unsupported("boolean index among several indices")
    shape = np.broadcast_shapes(*[tuple(static(b.shape(i), "index shape")) for i in indices])
    dims = b.const(list(shape), hint="shape")
    last = b.const([-1])
    parts = [b.node("Unsqueeze", [b.node("Expand", [i.name, dims]), last]) for i in indices]
    tuples = b.node("Concat", parts, axis=-1)
    # GatherND takes no negative indices: wrap each by its axis size
    sizes = static(b.shape(op.inputs[0])[:len(indices)], "indexed sizes")
    wrapped = b.node("Mod", [b.node("Add", [tuples, b.const(sizes)]), b.const(sizes)])
    b.node("GatherND", [b.x(op), wrapped], b.y(op))


@LOWERINGS.register("torch.masked_select", "Tensor.masked_select")
def masked_select(b, op):
    mask = op.input("mask", 1)
    if mask is None:
        raise Unsupported("no mask input")
    shape = np.broadcast_shapes(tuple(b.shape(op.inputs[0])), tuple(b.shape(mask)))
    _flat_compress(b, b.x(op), mask.name, static(list(shape), "shapes"), b.y(op))


# --- Tensor.index_put: ScatterND over the leading dims ----------------------------------------
def _index_put_mask(b, op, data, mask, values) -> None:
    """data[mask] = scalar: a Where (a non-scalar value needs the mask's nonzero count)."""
    if op.params.get("accumulate") or values.shape is None or int(np.prod(values.shape)) != 1:
        raise Unsupported("boolean-mask index_put needs one value and accumulate=False")
    value = b.node("CastLike", [values.name, data.name])
    if values.shape:
        value = b.node("Reshape", [value, b.const([], hint="shape")])
    b.node("Where", [mask.name, value, data.name], b.y(op))


def _scatter_indices(b, indices, dims: list[int]) -> str:
    """The index tensors (as int64, negatives wrapped) stacked on a new last axis, as
    ScatterND wants."""
    last = b.const([-1], hint="axes")
    columns = []
    for operand, dim in zip(indices, dims):
        index = operand.name if b.dtype(operand) == "i64" else \
            b.node("Cast", [operand.name], to=TensorProto.INT64)
        wrapped = b.node("Where", [b.node("Less", [index, b.const(0)]),
                                   b.node("Add", [index, b.const(dim)]), index])
        columns.append(b.node("Unsqueeze", [wrapped, last]))
    return columns[0] if len(columns) == 1 else b.node("Concat", columns, axis=-1)


@LOWERINGS.register("Tensor.index_put")
def index_put(b, op):
    data, values = op.inputs[0], op.inputs[-1]
    indices = op.inputs[1:-1]
    shape = b.shape(data)
    if not indices or any(i.shape is None for i in indices) or shape is None or -1 in shape:
        raise Unsupported("needs static shapes")
    if len(indices) == 1 and b.dtype(indices[0]) == "bool":
        return _index_put_mask(b, op, data, indices[0], values)
    if any(b.dtype(i) not in ("i64", "i32") for i in indices) or \
            any(i.shape != indices[0].shape for i in indices):
        raise Unsupported("index tensors must be integer and of one shape")
    where = _scatter_indices(b, indices, shape)
    target = list(indices[0].shape) + shape[len(indices):]
    value = b.node("CastLike", [values.name, data.name])
    update = b.node("Expand", [value, b.const(target, hint="shape")])
    reduction = "add" if op.params.get("accumulate") else None
    b.node("ScatterND", [data.name, where, update], b.y(op), reduction=reduction)


# --- torch.as_strided: a Gather of the strided positions from the flattened input -----------
def _strided_positions(size: list[int], stride: list[int], offset: int) -> np.ndarray:
    positions = np.full(size, offset, np.int64)
    for dim, (n, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = n
        positions = positions + (np.arange(n, dtype=np.int64) * step).reshape(shape)
    return positions


@LOWERINGS.register("torch.as_strided", "Tensor.as_strided")
def as_strided(b, op):
    size, stride = [int(s) for s in op.params["size"]], [int(s) for s in op.params["stride"]]
    offset = int(op.params.get("storage_offset") or 0)
    if len(size) != len(stride):
        raise Unsupported("size and stride of different lengths")
    numel = int(np.prod(static(b.shape(op.inputs[0]), "input shape")))
    positions = _strided_positions(size, stride, offset)
    if positions.size and not 0 <= positions.min() <= positions.max() < numel:
        raise Unsupported("strided view reaches outside the input")
    flat = b.node("Reshape", [b.x(op), b.const([-1], hint="shape")])
    b.node("Gather", [flat, b.const(positions, hint="positions")], b.y(op), axis=0)


@LOWERINGS.register("torch.nonzero", "Tensor.nonzero", "torch.argwhere", "Tensor.argwhere")
def nonzero(b, op):
    """NonZero gives (rank, n) indices; torch gives (n, rank), or a tuple of n-long rows."""
    found = b.node("NonZero", [b.x(op)])
    if not op.params.get("as_tuple"):
        b.node("Transpose", [found], b.y(op), perm=[1, 0])
        return
    for i in range(len(op.outputs)):
        b.node("Gather", [found, b.const(i, hint="row")], b.y(op, i), axis=0)
