"""Which torch dim of each operand ncnn carries as the Mat batch (`n`), decided per operator.

ncnn runs every layer that does not handle the batch itself once per sample, broadcasting a
blob of n = 1 to every sample of the others, so a per-sample lowering is right for any batch
size. Each lowering declares on its registration what it can run that way (trait `batch=`):

  FIRST     (N, C, ...) operators (convolution, pooling, padding, resize, shuffles): input 0
            and the outputs carry dim 0 as the batch when input 0 has more dims than the
            unbatched form (trait `unbatched_rank`, an int or fn(op); None: always batched),
            and no batch otherwise; `batched_inputs=k`: the first k inputs so when they have
            input 0's rank (grid_sample's grid, attention's key, value and mask); the other
            inputs (run-time weights) hold every dim.
  LEADING   per-sample lowerings that read every layout from ctx.shape / ctx.axis: the batch is
            dim 0 of the highest-rank inputs and of the outputs, or nowhere; `dynamic_batch=True`:
            an input 0 whose dim 0 follows the input is wanted with it as the batch (the norms
            cannot tile their per-channel parameters over an N held in the blob that is unknown).
  ANY       elementwise: the batch may be any dim; operands align from the right (broadcast).
  RESHAPE   view/reshape/flatten/squeeze/unsqueeze: the input keeps its batch axis and the
            output takes one where the reshape keeps each sample whole (else a batch-aware
            Reshape, 12/13 = input/output batch axis, copies the data).
  PERMUTE   permute/transpose: the batch axis moves with its dim.
  SEQUENCE  recurrent and attention layers: trait `sequence_axes(ctx, op)` -> (input axes,
            output axes), from batch_first.

The driver (lower.py) asks `plan` for the axes an operator reads and writes, converts an input
that comes with another axis (`convert`: a Reshape with 12/13), and when the lowering refuses
to work along the batch axis (errors.AlongBatch) lowers it again with every operand holding all
its dims (`physical`). Graph inputs take the axis their consumers want (`input_axes`)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...errors import Unsupported
from ...ir import Graph, Operand, Operator
from .context import MAX_BLOB_RANK, NO_BATCH, RESHAPES, Context, dims_params

from .registry import ANY, FIRST, LEADING, PERMUTE, RESHAPE, SEQUENCE
from .shape_expr import keeps_leading_dim, own_shape_expression


@dataclass
class Plan:
    inputs: list[int | None]    # batch axis each input is read with
    outputs: list[int | None]   # batch axis each output is written with

    @property
    def batched(self) -> bool:
        return any(a is not None for a in (*self.inputs, *self.outputs))


def physical(op: Operator) -> Plan:
    """Every operand holds all its dims (no batch axis)."""
    return Plan([None] * len(op.inputs), [None] * len(op.outputs))


def _rank(x: Operand) -> int:
    return len(x.shape) if x.shape is not None else -1


def _size(x: Operand, axis: int | None) -> int:
    return 1 if axis is None or x.shape is None or not x.shape else int(x.shape[axis])


def _is_constant(x: Operand) -> bool:
    return x.producer is not None and x.producer.type == "pnnx.Attribute"


def current_axis(ctx: Context, x: Operand) -> int | None:
    return ctx.axes.get(x.name) if not _is_constant(x) else None


# --- per-operator plans ------------------------------------------------------------------
def plan(ctx: Context, op: Operator, traits: dict, preferred: dict[str, int | None]) -> Plan:
    policy = traits.get("batch", LEADING)
    if policy == FIRST:
        return _first(op, traits)
    if policy == SEQUENCE:
        found = traits["sequence_axes"](ctx, op)
        return Plan(list(found[0]), list(found[1]))
    if policy == RESHAPE:
        return _reshape(ctx, op, preferred)
    if policy == PERMUTE:
        return _permute(ctx, op)
    if policy == ANY:
        return _aligned(ctx, op)
    return _leading(ctx, op)


def unbatched_rank(op: Operator, traits: dict) -> int | None:
    rank = traits.get("unbatched_rank")
    return rank(op) if callable(rank) else rank


def _first(op: Operator, traits: dict) -> Plan:
    result = physical(op)
    x = op.inputs[0] if op.inputs else None
    if x is None or x.shape is None:
        return result
    unbatched = unbatched_rank(op, traits)
    if unbatched is not None and len(x.shape) <= unbatched:
        return result
    for i in range(min(int(traits.get("batched_inputs", 1)), len(op.inputs))):
        if op.inputs[i].shape is not None and len(op.inputs[i].shape) == len(x.shape):
            result.inputs[i] = 0
    batch = _size(x, 0)
    for j, out in enumerate(op.outputs):
        if out.shape and (out.shape[0] == batch or batch == 1):
            result.outputs[j] = 0
    return result


def _activations(op: Operator) -> list[int]:
    tensors = [i for i, x in enumerate(op.inputs) if x.shape is not None]
    found = [i for i in tensors if not _is_constant(op.inputs[i])]
    return found or tensors


def _leading(ctx: Context, op: Operator) -> Plan:
    """Dim 0 of the highest-rank inputs is the batch when one of them comes batched there and the
    others agree; the outputs whose dim 0 has that size carry it. An input of lower rank (which
    broadcasts from the right) and a constant without a leading 1 hold every dim."""
    acts = _activations(op)
    if not acts:
        return physical(op)
    top = max(_rank(op.inputs[i]) for i in acts)
    if top < 1:
        return physical(op)
    lead = [i for i in acts if _rank(op.inputs[i]) == top]
    batched = [i for i in lead if current_axis(ctx, op.inputs[i]) == 0]
    if not batched:
        return physical(op)
    batch = max(_size(op.inputs[i], 0) for i in batched)
    if any(i not in batched and _size(op.inputs[i], 0) == batch and batch > 1 for i in lead):
        return physical(op)  # another input holds the same batch as a dim: run everything whole
    if batch == 1 and any(i not in batched and _size(op.inputs[i], 0) > 1 for i in lead):
        return physical(op)  # dim 0 is data for another input (cat along it): the 1 is data too
    outputs: list[int | None] = []
    for out in op.outputs:
        if out.shape and out.shape[0] == batch:
            outputs.append(0)
        elif batch == 1 or not out.consumers and not _is_output(out):
            outputs.append(None)  # a batch of 1 folded into the data (n = 1 either way)
        else:
            return physical(op)
    inputs: list[int | None] = []
    for i, x in enumerate(op.inputs):
        if i in batched:
            inputs.append(0)
        elif _is_constant(x):
            inputs.append(0 if x.shape and len(x.shape) > 1 and x.shape[0] == 1 else None)
        elif i in lead and _size(x, 0) == 1:
            inputs.append(0)
        else:
            inputs.append(None)
    return Plan(inputs, outputs)


def _is_output(x: Operand) -> bool:
    return any(c.type == "pnnx.Output" for c in x.consumers)


def _aligned(ctx: Context, op: Operator) -> Plan:
    """Elementwise: the batch axis of the first batched highest-rank input, every operand
    aligned from the right (a size-1 dim there is carried as a batch of 1)."""
    acts = _activations(op)
    tensors = [x for x in (*op.inputs, *op.outputs) if x.shape is not None]
    if not acts or not tensors:
        return physical(op)
    top = max(_rank(x) for x in tensors)
    axis = None
    for i in sorted(acts, key=lambda i: -_rank(op.inputs[i])):
        b = current_axis(ctx, op.inputs[i])
        if b is not None:
            axis = b + top - _rank(op.inputs[i])
            break
    if axis is None:
        return physical(op)

    def position(x: Operand) -> int | None:
        p = axis - (top - _rank(x))
        return p if x.shape is not None and 0 <= p < len(x.shape) else None

    batch = max(int(x.shape[p]) for x in tensors if (p := position(x)) is not None)
    inputs = []
    for x in op.inputs:
        p = position(x)
        inputs.append(p if p is not None and x.shape[p] in (1, batch) else None)
    outputs = []
    for out in op.outputs:
        p = position(out)
        if p is not None and out.shape[p] == batch:
            outputs.append(p)
        elif batch == 1 or out.shape is None:
            outputs.append(None)
        else:
            return physical(op)
    return Plan(inputs, outputs)


def keeps_samples(in_shape, axis: int, out_shape) -> int | None:
    """The dim of `out_shape` that a reshape of `in_shape` maps the batch `axis` onto with every
    sample kept whole (same extent, same number of elements before it), or None."""
    before = math.prod(in_shape[:axis])
    for p, size in enumerate(out_shape):
        if math.prod(out_shape[:p]) == before and size == in_shape[axis]:
            return p
        if math.prod(out_shape[:p]) > before:
            break
    return None


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) and d > 0 for d in shape)


def _fits(shape, axis: int | None) -> bool:
    """Whether a tensor of `shape` carried with batch `axis` fits an ncnn blob."""
    return (axis is None or axis < len(shape)) and len(shape) - (axis is not None) <= MAX_BLOB_RANK


def _reshape(ctx: Context, op: Operator, preferred: dict[str, int | None]) -> Plan:
    """The input keeps its axis; the output takes the one its consumers want, else the dim the
    reshape maps a batch (of more than 1) onto with each sample whole, else none (dim 0 for a
    rank-5 result, or when a batch of 1 stays its leading 1, as upstream drops it)."""
    result = physical(op)
    x, out = op.inputs[0], op.outputs[0]
    b = current_axis(ctx, x)
    result.inputs[0] = b
    for i in range(1, len(op.inputs)):  # view_as / reshape_as: the other operand gives a shape only
        result.inputs[i] = current_axis(ctx, op.inputs[i])
    if not _static(x.shape) or not _static(out.shape):
        result.inputs[0] = b if b == 0 else None
        result.outputs[0] = 0 if b == 0 and op.type in RESHAPES and keeps_leading_dim(op) else None
        return result
    if out.name in preferred and _fits(out.shape, preferred[out.name]):
        result.outputs[0] = preferred[out.name]
        return result
    kept = keeps_samples(list(x.shape), b, list(out.shape)) if b is not None and x.shape else None
    if kept is not None and x.shape[b] > 1:
        result.outputs[0] = kept
    elif len(out.shape) > MAX_BLOB_RANK:
        result.outputs[0] = 0
    elif b is not None and x.shape and x.shape[b] == 1 and len(out.shape) > 1 and out.shape[0] == 1:
        result.outputs[0] = 0
    return result


def _permute(ctx: Context, op: Operator) -> Plan:
    result = physical(op)
    x = op.inputs[0]
    b = current_axis(ctx, x)
    perm = permutation_of(op)
    if b is None or perm is None:
        return result
    result.inputs[0] = b
    result.outputs[0] = perm.index(b)
    return result


def permutation_of(op: Operator) -> list[int] | None:
    """The torch permutation a permute/transpose/t/movedim applies (dims >= 0), or None."""
    shape = op.inputs[0].shape if op.inputs else None
    if shape is None:
        return None
    rank = len(shape)
    if op.type in ("Tensor.permute", "torch.permute"):
        perm = list(op.params.get("dims") or [])
    elif op.type in ("torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes"):
        a = op.params.get("dim0", op.params.get("axis0"))
        b = op.params.get("dim1", op.params.get("axis1"))
        if not isinstance(a, int) or not isinstance(b, int):
            return None
        perm = list(range(rank))
        a, b = a % rank, b % rank
        perm[a], perm[b] = perm[b], perm[a]
    elif op.type in ("torch.t", "Tensor.t"):
        perm = list(range(rank)) if rank < 2 else [1, 0]
    elif op.type in ("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis"):
        source, destination = op.params.get("source"), op.params.get("destination")
        if source is None or destination is None:
            return None
        perm = movedim_permutation(source, destination, rank)
    else:
        return None
    if len(perm) != rank or not all(isinstance(d, int) for d in perm):
        return None
    return [d + rank if d < 0 else d for d in perm]


def movedim_permutation(source, destination, rank: int) -> list[int]:
    """torch.movedim as a permutation: each source dim lands at its destination, the other
    dims fill the remaining places in their order."""
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    source = [d + rank if d < 0 else d for d in source]
    destination = [d + rank if d < 0 else d for d in destination]
    perm: list[int | None] = [None] * rank
    for s, d in zip(source, destination):
        perm[d] = s
    rest = iter(d for d in range(rank) if d not in source)
    return [next(rest) if p is None else p for p in perm]


# --- graph inputs ------------------------------------------------------------------------
def input_axes(graph: Graph, lookup) -> tuple[dict[str, int | None], dict[str, int | None]]:
    """(axis per graph input, preferred axis per operand): the batch axis the first operator
    that needs one (FIRST and SEQUENCE lowerings) wants, followed back through elementwise,
    per-sample and shape operators; without one, a leading 1 is a batch of 1 (as upstream drops
    it) and an input of rank 5 carries dim 0 (ncnn blobs have at most 4 dims)."""
    preferred: dict[str, int | None] = {}
    pending: list[tuple[Operand, int | None]] = []
    for op in graph.ops:
        rule = lookup(op.type)
        if rule is None:
            continue
        policy = rule.traits.get("batch", LEADING)
        if policy == FIRST:
            wanted = _first(op, rule.traits).inputs
        elif policy == SEQUENCE:
            wanted = rule.traits["sequence_axes"](None, op)[0]
        elif rule.traits.get("dynamic_batch") and _rank(op.inputs[0]) > 1 and op.inputs[0].shape[0] < 0:
            wanted = [0] + [None] * (len(op.inputs) - 1)  # a dim 0 that follows the input is the batch
        else:
            continue
        pending += [(x, a) for x, a in zip(op.inputs, wanted) if not _is_constant(x)]
    while pending:
        x, axis = pending.pop(0)
        if x.name in preferred:
            continue
        preferred[x.name] = axis
        producer = x.producer
        if producer is None or producer.type == "pnnx.Input" or axis is None:
            continue
        rule = lookup(producer.type)
        policy = rule.traits.get("batch", LEADING) if rule is not None else None
        pending += [(i, a) for i, a in _back(producer, policy, x, axis) if not _is_constant(i)]
    axes = {}
    for op in graph.inputs():
        x = op.outputs[0]
        axes[x.name] = preferred[x.name] if x.name in preferred else _default(x)
    return axes, preferred


def _default(x: Operand) -> int | None:
    shape = x.shape or []
    if len(shape) > MAX_BLOB_RANK or len(shape) >= 2 and shape[0] == 1:
        return 0
    return None


def _back(op: Operator, policy, out: Operand, axis: int) -> list[tuple[Operand, int | None]]:
    """The axes `op`'s inputs would need for its output `out` to come with `axis`."""
    if policy == ANY:
        top = _rank(out)
        found = []
        for x in op.inputs:
            p = axis - (top - _rank(x))
            if x.shape is not None and 0 <= p < len(x.shape) and x.shape[p] == out.shape[axis]:
                found.append((x, p))
        return found
    if policy == LEADING and axis == 0 and out.shape:
        top = max((_rank(x) for x in op.inputs if not _is_constant(x)), default=-1)
        return [(x, 0) for x in op.inputs if _rank(x) == top and x.shape and x.shape[0] == out.shape[0]]
    if policy == PERMUTE:
        perm = permutation_of(op)
        return [(op.inputs[0], perm[axis])] if perm is not None else []
    if policy == RESHAPE and _static(op.inputs[0].shape) and _static(out.shape):
        kept = keeps_samples(list(out.shape), axis, list(op.inputs[0].shape))
        return [(op.inputs[0], kept)] if kept is not None else []
    if policy == RESHAPE and axis == 0 and op.type in RESHAPES and keeps_leading_dim(op):
        return [(op.inputs[0], 0)]
    return []


# --- conversions --------------------------------------------------------------------------
def convert(ctx: Context, x: Operand, blob: str, src: int | None, dst: int | None) -> str:
    """`blob` (operand `x` carried with batch axis `src`) carried with batch axis `dst` instead."""
    key = (x.name, dst)
    if key in ctx.converted:
        return ctx.converted[key]
    shape = list(x.shape or [])
    target = ctx.temp(x.name)
    if _size(x, src) == 1 and _size(x, dst) == 1:
        # a batch of 1 on both sides: an ordinary reshape between the per-sample shapes
        before = _without(shape, src)
        after = _without(shape, dst)
        if before == after:
            ctx.converted[key] = blob
            return blob
        if len(after) > MAX_BLOB_RANK:
            raise Unsupported(f"operand {x.name} {tuple(shape)} would be a rank-{len(after)} blob")
        if len(after) == 1:
            ctx.emit("Flatten", "flatten", [blob], [target])
        elif not _static(after):  # the sizes that follow the input read from the blob itself
            ctx.emit("Reshape", "reshape", [blob], [target], {6: own_shape_expression(shape, src, dst)})
        else:
            ctx.emit("Reshape", "reshape", [blob], [target], dims_params(after or [1]))
    else:
        ctx.emit("Reshape", "batchaxis", [blob], [target], batch_reshape_params(shape, src, dst))
    ctx.converted[key] = target
    return target


def _without(shape: list[int], axis: int | None) -> list[int]:
    return shape if axis is None else shape[:axis] + shape[axis + 1:]


def batch_reshape_params(shape: list[int], src: int | None, dst: int | None) -> dict:
    """Reshape params for a batch-aware reshape to the full (logical, batch included) torch
    `shape`: 12/13 = the batch axis of the input / output (233: none)."""
    if dst is not None and len(shape) == 1:  # ncnn has no 0-d sample: each one holds (1,)
        shape = [shape[0], 1]
    physical_rank = len(shape) - (dst is not None)
    if physical_rank > MAX_BLOB_RANK or len(shape) - (src is not None) > MAX_BLOB_RANK:
        raise Unsupported(f"a {tuple(shape)} tensor without a batch axis is a rank-{len(shape)} blob "
                          f"(ncnn blobs have at most {MAX_BLOB_RANK} dims)")
    if not _static(shape):  # the sizes that follow the input read from the blob itself
        params: dict = {6: own_shape_expression(shape, src)}
    elif len(shape) <= MAX_BLOB_RANK:
        params = dims_params(shape)
    else:
        params = {6: ",".join(str(d) for d in reversed(shape))}  # a 5-d shape as a list expression, w first
    params[12] = NO_BATCH if src is None else src
    params[13] = NO_BATCH if dst is None else dst
    return params


DIGIT = re.compile(r"(\d)d\b")


def spatial_dims(op_type: str) -> int | None:
    """The N of an N-d operator's name (nn.Conv2d, F.max_pool3d), or None."""
    found = DIGIT.search(op_type)
    return int(found.group(1)) if found else None
