"""nn.Embedding / F.embedding -> Embed; nn.EmbeddingBag / F.embedding_bag -> Embed + a
Reduction per bag (constant offsets, padding_idx for sum/mean, per_sample_weights)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..arithmetic import binary, scalar
from ..context import Context, dims_params, param
from ..layers import Weight
from ..lookup import KEEP_INT32_BITS, lookup_by_value
from ..reduction import REDUCE_MAX, REDUCE_MEAN, REDUCE_SUM, reduction
from ..registry import LEADING, LOWERINGS
from ..shape_expr import reshape_to



def _embed_indices(ctx: Context, operand, base: str) -> str:
    """The blob Embed reads its indices from. Embed reads one row (w int32 words) and writes
    (w, dim): a deeper blob is flattened first, on the CPU in fp32 storage, since a GPU or
    fp16 copy would convert the int32 bits as if they were floats."""
    index = ctx.blob(operand)
    if ctx.rank(operand) == 1:
        return index
    flat = ctx.temp(base)
    ctx.emit("Flatten", "flatten", [index], [flat], {31: KEEP_INT32_BITS})
    return flat


def reads_int32_bits(ctx: Context, operand) -> bool:
    """Whether Embed can read these indices: a graph input fed as int32 bits, or a constant."""
    return operand.name in ctx.int_bits or ctx.constant(operand) is not None


def _renormed(weight: np.ndarray, max_norm, norm_type) -> np.ndarray:
    """The table with torch's max_norm applied to every row up front: torch scales each row
    it looks up whose norm exceeds max_norm by max_norm / (norm + 1e-7), in place, so a lookup
    returns the scaled row on the first call and on every later one; Embed has no such step."""
    if max_norm is None:
        return weight
    rows = weight.astype(np.float64)
    norms = np.linalg.norm(rows, ord=float(norm_type), axis=1, keepdims=True)
    scale = np.where(norms > float(max_norm), float(max_norm) / (norms + 1e-7), 1.0)
    return (rows * scale).astype(np.float32)


@LOWERINGS.register("nn.Embedding", "F.embedding", batch=LEADING)
def embedding(ctx: Context, op) -> None:
    weight = op.attrs["weight"].to_numpy() if "weight" in op.attrs else ctx.constant_input(op, "weight", 1)
    if weight is None:
        raise Unsupported("embedding without a constant weight")
    weight = _renormed(weight, param(op, "max_norm"), param(op, "norm_type", 2.0))
    num, dim = weight.shape
    out = op.outputs[0]
    shape = ctx.shape(out)
    if len(shape) > 4:
        raise Unsupported(f"embedding to a rank-{len(shape)} blob (ncnn blobs have at most 4 dims)")
    target = out.name if len(shape) == 2 else ctx.temp(out.name)
    if reads_int32_bits(ctx, op.inputs[0]):
        ctx.emit("Embed", "embed", [_embed_indices(ctx, op.inputs[0], out.name)], [target],
                 {0: int(dim), 1: int(num), 2: 0, 3: int(weight.size)},
                 [Weight(weight.astype(np.float32, copy=False).reshape(-1), tagged=True)])
    else:
        lookup_by_value(ctx, op.inputs[0], weight.astype(np.float32, copy=False), target)
    if target != out.name:  # a size that follows the input is the indices' own
        index, axis = op.inputs[0], ctx.batch_axis(out)
        dims = [d for d in range(len(ctx.torch_shape(out))) if d != axis]
        reshape_to(ctx, target, shape, [(index, d) for d in dims], out.name)


_BAG_REDUCE = {"sum": REDUCE_SUM, "mean": REDUCE_MEAN, "max": REDUCE_MAX}


def _bag_table(ctx: Context, op, mode: str) -> tuple[np.ndarray, bool]:
    """The Embed table, and whether its last column counts the non-padding entries: the
    padding_idx row is zeroed (torch leaves it out of sum and mean), and a mean over bags that
    may hold it divides by that count rather than the bag length."""
    if "weight" in op.attrs:
        weight = op.attrs["weight"].to_numpy()
    else:
        operand = op.input("weight", 1)
        weight = ctx.constant(operand) if operand is not None else None
    if weight is None:
        raise Unsupported("embedding_bag without a constant weight")
    weight = weight.astype(np.float32)
    padding = param(op, "padding_idx")
    if padding is None:
        return weight, False
    if mode == "max":
        raise Unsupported("embedding_bag max with padding_idx is not lowered (an all-padding bag "
                          "needs a masked max)")
    padding = padding % weight.shape[0]
    weight = weight.copy()
    weight[padding] = 0.0
    if mode == "sum":
        return weight, False
    counts = np.ones((weight.shape[0], 1), np.float32)
    counts[padding] = 0.0
    return np.concatenate([weight, counts], axis=1), True


def _bag_reduce(ctx: Context, mode: str, src: str, axis: int, rank: int, keep: bool, width: int,
                counted: bool, out: str) -> str:
    """Reduce the bag axis of src (last dim `width`); with a count column, mean = sum / count
    (at least 1: a bag of padding only is zeros) over the first width - 1 columns."""
    if not counted:
        return reduction(ctx, _BAG_REDUCE[mode], src, [axis], rank, keep, out)
    total = reduction(ctx, REDUCE_SUM, src, [axis], rank, keep, ctx.temp(out))
    last = rank - 1 if keep else rank - 2
    values, count = ctx.temp(out), ctx.temp(out)
    ctx.emit("Crop", "slice", [total], [values], {9: [0], 10: [width - 1], 11: [last]})
    ctx.emit("Crop", "slice", [total], [count], {9: [width - 1], 10: [width], 11: [last]})
    return binary(ctx, "div", values, scalar(ctx, "max", count, 1.0, ctx.temp(out)), out)


def _bag_offsets(ctx: Context, op, index) -> list[int] | None:
    operand = op.input("offsets", 2 if op.type == "F.embedding_bag" else 1)
    if operand is None:
        return None
    value = ctx.constant(operand)
    if value is None:
        raise Unsupported("embedding_bag offsets given at run time are not lowered (bags become Crops "
                          "of constant bounds)")
    bounds = [int(v) for v in value.reshape(-1)]
    if not param(op, "include_last_offset", False):
        bounds.append(ctx.torch_shape(index)[0])
    if any(b < a for a, b in zip(bounds, bounds[1:])):
        raise Unsupported("embedding_bag offsets are not ascending")
    return bounds


def _weighted(ctx: Context, op, rows: str, shape: list[int], out: str) -> str:
    """rows (shape[:-1] entries of shape[-1] values) times per_sample_weights, if given."""
    operand = op.input("per_sample_weights", 3 if op.type == "F.embedding_bag" else 2)
    if operand is None:
        return rows
    column = ctx.temp(out)
    ctx.emit("Reshape", "reshape", [ctx.blob(operand)], [column], dims_params(shape[:-1] + [1]))
    return binary(ctx, "mul", rows, column, ctx.temp(out))


@LOWERINGS.register("nn.EmbeddingBag", "F.embedding_bag", batch=LEADING)
def embedding_bag(ctx: Context, op) -> None:
    """Embed every index, then reduce each bag: the last axis of a (B, L) input, or the Crops of
    a 1-d input between constant offsets (Concat of the per-bag results)."""
    mode = param(op, "mode", "mean")
    if mode not in _BAG_REDUCE or param(op, "max_norm") is not None:
        raise Unsupported(f"embedding_bag mode={mode!r} max_norm={param(op, 'max_norm')} is not lowered")
    table, counted = _bag_table(ctx, op, mode)
    num, width = table.shape
    index, out = op.inputs[0], op.outputs[0].name
    rows = ctx.temp(out)
    ctx.emit("Embed", "embed", [_embed_indices(ctx, index, out)], [rows],
             {0: int(width), 1: int(num), 2: 0, 3: int(table.size)},
             [Weight(table.reshape(-1), tagged=True)])
    offsets = _bag_offsets(ctx, op, index)
    if offsets is None:
        _fixed_bags(ctx, op, rows, width, counted, mode)
    else:
        _offset_bags(ctx, op, rows, offsets, width, counted, mode)


def _fixed_bags(ctx: Context, op, rows: str, width: int, counted: bool, mode: str) -> None:
    """(B, L) indices: Embed rows reshaped to (B, L, width), reduced over L."""
    index, out = op.inputs[0], op.outputs[0].name
    bags = ctx.shape(op.outputs[0])[:-1]
    shape = bags + [ctx.torch_shape(index)[-1], width]
    if len(shape) > 4:
        raise Unsupported(f"embedding_bag of a rank-{len(shape)} blob (ncnn blobs have at most 4 dims)")
    grouped = ctx.temp(out)
    ctx.emit("Reshape", "reshape", [rows], [grouped], dims_params(shape))
    grouped = _weighted(ctx, op, grouped, shape, out)
    _bag_reduce(ctx, mode, grouped, len(bags), len(shape), False, width, counted, out)


def _empty_bag(ctx: Context, rows: str, width: int, out: str) -> None:
    """An empty bag is a row of zeros in every mode (torch): ncnn has no empty blob to reduce,
    so one embedded row is cropped and zeroed."""
    row = ctx.temp(out)
    ctx.emit("Crop", "slice", [rows], [row], {9: [0, 0], 10: [1, width], 11: [0, 1]})
    scalar(ctx, "mul", row, 0.0, out)


def _offset_bags(ctx: Context, op, rows: str, bounds: list[int], width: int, counted: bool,
                 mode: str) -> None:
    """1-d indices: one Crop of the (N, width) rows per bag, reduced, then concatenated."""
    out = op.outputs[0].name
    rows = _weighted(ctx, op, rows, [ctx.torch_shape(op.inputs[0])[0], width], out)
    parts = [out] if len(bounds) == 2 else [ctx.temp(out) for _ in bounds[1:]]
    for start, end, part in zip(bounds, bounds[1:], parts):
        if start == end:
            _empty_bag(ctx, rows, width - counted, part)
            continue
        bag = ctx.temp(out)
        ctx.emit("Crop", "slice", [rows], [bag], {9: [start], 10: [end], 11: [0]})
        _bag_reduce(ctx, mode, bag, 0, 2, True, width, counted, part)
    if len(parts) > 1:
        ctx.emit("Concat", "concat", parts, [out], {0: 0})
