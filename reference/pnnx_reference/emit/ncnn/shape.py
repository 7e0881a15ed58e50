"""Shape-only operators. With static shapes every view/reshape/flatten/squeeze/unsqueeze is an
ncnn Reshape to the (batch-dropped) output shape, or nothing when the shape is unchanged;
permute/transpose become Permute, whose order_type is the permutation's index in
lexicographic order (checked against ncnn in the tests)."""
from __future__ import annotations

import itertools

from .context import RESHAPES, CannotLower, Context, dims_params, param
from .registry import lowers


@lowers(*RESHAPES)
def reshape(ctx: Context, op) -> None:
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if -1 in out_shape or -1 in in_shape:
        raise CannotLower("dynamic shapes are not lowered (reshape needs static sizes)")
    if out_shape == in_shape:
        ctx.alias(out, src)
        return
    if src.name in ctx.flat_views and len(out_shape) == 1:
        ctx.aliases[out.name] = ctx.flat_views[src.name]
        return
    if len(out_shape) > 4:
        raise CannotLower(f"reshape to a rank-{len(out_shape)} blob (ncnn blobs have at most 4 dims)")
    if not out_shape:
        raise CannotLower("reshape to a 0-d tensor")
    if len(out_shape) == 1:
        ctx.emit("Flatten", "flatten", [ctx.blob(src)], [out.name])
        return
    ctx.emit("Reshape", "reshape", [ctx.blob(src)], [out.name], dims_params(out_shape))


def permutation_order_type(perm: list[int]) -> int:
    return list(itertools.permutations(range(len(perm)))).index(tuple(perm))


def _permute(ctx: Context, op, torch_perm: list[int]) -> None:
    src, out = op.inputs[0], op.outputs[0]
    rank = len(ctx.torch_shape(src))
    torch_perm = [d + rank if d < 0 else d for d in torch_perm]
    if ctx.batchless:
        perm = torch_perm
    elif torch_perm[0] != 0:
        raise CannotLower("permutes the batch axis: ncnn blobs have no batch axis")
    else:
        perm = [d - 1 for d in torch_perm[1:]]
    if perm == sorted(perm):
        ctx.alias(out, src)
        return
    ctx.emit("Permute", "permute", [ctx.blob(src)], [out.name], {0: permutation_order_type(perm)})


@lowers("Tensor.permute", "torch.permute")
def permute(ctx: Context, op) -> None:
    _permute(ctx, op, list(param(op, "dims")))


@lowers("torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes")
def transpose(ctx: Context, op) -> None:
    rank = len(ctx.torch_shape(op.inputs[0]))
    a = int(param(op, "dim0", param(op, "axis0")))
    b = int(param(op, "dim1", param(op, "axis1")))
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    _permute(ctx, op, perm)


@lowers("torch.t", "Tensor.t")
def t(ctx: Context, op) -> None:
    rank = len(ctx.torch_shape(op.inputs[0]))
    _permute(ctx, op, [0, 1] if rank < 2 else [1, 0])


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


@lowers("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis")
def movedim(ctx: Context, op) -> None:
    source, destination = param(op, "source"), param(op, "destination")
    if source is None or destination is None:
        raise CannotLower("movedim without constant source and destination dims")
    _permute(ctx, op, movedim_permutation(source, destination, len(ctx.torch_shape(op.inputs[0]))))
