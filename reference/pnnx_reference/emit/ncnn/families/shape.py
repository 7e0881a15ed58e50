"""Shape-only operators: view/reshape/flatten/squeeze/... -> Reshape (Flatten for 1-d), or
nothing when the shape is unchanged; permute/transpose/t/movedim -> Permute, whose order_type
is the permutation's index in lexicographic order."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import RESHAPES, Context, dims_params, param, permutation_order_type
from ..registry import LOWERINGS


@LOWERINGS.register(*RESHAPES, batchless=True)
def reshape(ctx: Context, op) -> None:
    src, out = op.inputs[0], op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if -1 in out_shape or -1 in in_shape:
        raise Unsupported("dynamic shapes are not lowered (reshape needs static sizes)")
    if out_shape == in_shape:
        ctx.alias(out, src)
        return
    if src.name in ctx.flat_views and len(out_shape) == 1:
        ctx.aliases[out.name] = ctx.flat_views[src.name]
        return
    if len(out_shape) > 4:
        raise Unsupported(f"reshape to a rank-{len(out_shape)} blob (ncnn blobs have at most 4 dims)")
    if not out_shape:
        raise Unsupported("reshape to a 0-d tensor")
    if len(out_shape) == 1:
        ctx.emit("Flatten", "flatten", [ctx.blob(src)], [out.name])
        return
    ctx.emit("Reshape", "reshape", [ctx.blob(src)], [out.name], dims_params(out_shape))


def _permute(ctx: Context, op, torch_perm: list[int]) -> None:
    src, out = op.inputs[0], op.outputs[0]
    rank = len(ctx.torch_shape(src))
    torch_perm = [d + rank if d < 0 else d for d in torch_perm]
    if ctx.batchless:
        perm = torch_perm
    elif torch_perm[0] != 0:
        raise Unsupported("permutes the batch axis: ncnn blobs have no batch axis")
    else:
        perm = [d - 1 for d in torch_perm[1:]]
    if perm == sorted(perm):
        ctx.alias(out, src)
        return
    ctx.emit("Permute", "permute", [ctx.blob(src)], [out.name], {0: permutation_order_type(perm)})


@LOWERINGS.register("Tensor.permute", "torch.permute", batchless=True)
def permute(ctx: Context, op) -> None:
    _permute(ctx, op, list(param(op, "dims")))


@LOWERINGS.register("torch.transpose", "Tensor.transpose", "torch.swapaxes", "Tensor.swapaxes",
                    batchless=True)
def transpose(ctx: Context, op) -> None:
    rank = len(ctx.torch_shape(op.inputs[0]))
    a = int(param(op, "dim0", param(op, "axis0")))
    b = int(param(op, "dim1", param(op, "axis1")))
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    _permute(ctx, op, perm)


@LOWERINGS.register("torch.t", "Tensor.t", batchless=True)
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


@LOWERINGS.register("torch.movedim", "Tensor.movedim", "torch.moveaxis", "Tensor.moveaxis", batchless=True)
def movedim(ctx: Context, op) -> None:
    source, destination = param(op, "source"), param(op, "destination")
    if source is None or destination is None:
        raise Unsupported("movedim without constant source and destination dims")
    _permute(ctx, op, movedim_permutation(source, destination, len(ctx.torch_shape(op.inputs[0]))))
