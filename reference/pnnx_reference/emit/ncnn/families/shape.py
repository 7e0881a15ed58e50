"""Shape-only operators: view/reshape/flatten/squeeze/... -> Reshape (Flatten for 1-d), or
nothing when the shape is unchanged; permute/transpose/t/movedim -> Permute, whose order_type
is the permutation's index in lexicographic order."""
from __future__ import annotations

from ....errors import Unsupported
from ..batch import batch_reshape_params, keeps_samples, permutation_of
from ..context import MAX_BLOB_RANK, NO_BATCH, RESHAPES, Context, dims_params, permutation_order_type
from ..registry import LOWERINGS, MOVES_DATA, PERMUTE, RESHAPE
from ..shape_expr import ShapeRefs, is_dynamic, keeps_leading_dim, render_list, reshape_target


def _per_sample(ctx: Context, src, out) -> bool:
    """Whether each sample reshapes on its own: no batch axis on either side, a batch of 1 on
    both, or the output's batch axis being where the reshape keeps every sample whole."""
    bi, bo = ctx.batch_axis(src), ctx.batch_axis(out)
    size_in = 1 if bi is None else src.shape[bi]
    size_out = 1 if bo is None else out.shape[bo]
    if size_in == 1 and size_out == 1:
        return True
    return bi is not None and bo is not None and keeps_samples(list(src.shape), bi, list(out.shape)) == bo


@LOWERINGS.register(*RESHAPES, batch=RESHAPE, **MOVES_DATA)
def reshape(ctx: Context, op) -> None:
    if "dtype" in op.params:  # Tensor.view(dtype): the same bytes read as another type
        raise Unsupported(f"view({op.params['dtype']}) reinterprets bytes; ncnn blobs hold floats")
    src, out = op.inputs[0], op.outputs[0]
    if is_dynamic(src.shape) or is_dynamic(out.shape):
        _dynamic_reshape(ctx, op)
        return
    in_shape, out_shape = ctx.shape(src), ctx.shape(out)
    if not _per_sample(ctx, src, out):
        # the batch moves: a batch-aware Reshape to the whole (batch included) torch shape
        ctx.emit("Reshape", "reshape", [ctx.blob(src)], [out.name],
                 batch_reshape_params(list(out.shape), ctx.batch_axis(src), ctx.batch_axis(out)))
        return
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
    if len(out_shape) <= 1:  # a 0-d result is carried as a 1-element blob (context.shape), as select's
        ctx.emit("Flatten", "flatten", [ctx.blob(src)], [out.name])
        return
    ctx.emit("Reshape", "reshape", [ctx.blob(src)], [out.name], dims_params(out_shape))
    if len(in_shape) == 1 and out_shape[1:] == [1] * (len(out_shape) - 1):
        ctx.flat_views[out.name] = ctx.blob(src)  # (c) -> (c,1,..,1): a BinaryOp may read the (c) blob


def _dynamic_reshape(ctx: Context, op) -> None:
    """A reshape to a shape that follows the input: one Reshape whose list expression ncnn
    evaluates at run time, batch-aware (12/13) when either side carries a batch axis."""
    src, out = op.inputs[0], op.outputs[0]
    items, operands = reshape_target(op)
    bi, bo = ctx.batch_axis(src), ctx.batch_axis(out)
    if len(items) - (bo is not None) > MAX_BLOB_RANK:
        raise Unsupported(f"reshape to a rank-{len(items)} blob (ncnn blobs have at most {MAX_BLOB_RANK} dims)")
    refs = ShapeRefs(ctx, [src])
    if bi == 0 and bo == 0 and keeps_leading_dim(op):  # each sample on its own
        params: dict = {6: render_list(items[1:], operands, refs)}
    else:
        params = {6: render_list(items, operands, refs)}
        if bi is not None or bo is not None:
            params.update({12: NO_BATCH if bi is None else bi, 13: NO_BATCH if bo is None else bo})
    ctx.emit("Reshape", "reshape", refs.blobs, [out.name], params)


@LOWERINGS.register("Tensor.permute", "torch.permute", "torch.transpose", "Tensor.transpose", "torch.swapaxes",
                    "Tensor.swapaxes", "torch.t", "Tensor.t", "torch.movedim", "Tensor.movedim", "torch.moveaxis",
                    "Tensor.moveaxis", batch=PERMUTE, **MOVES_DATA)
def permute(ctx: Context, op) -> None:
    """The permutation of each sample: the batch axis moves with its dim (batch.py), so the
    other dims keep their order around it."""
    src, out = op.inputs[0], op.outputs[0]
    torch_perm = permutation_of(op)
    if torch_perm is None:
        raise Unsupported(f"{op.type} without constant dims")
    b = ctx.batch_axis(src)
    perm = torch_perm if b is None else [d - (d > b) for d in torch_perm if d != b]
    if perm == sorted(perm):
        ctx.alias(out, src)
        return
    if len(perm) > 4:
        raise Unsupported(f"permute of a rank-{len(perm)} blob (ncnn Permute takes at most 4 dims)")
    ctx.emit("Permute", "permute", [ctx.blob(src)], [out.name], {0: permutation_order_type(perm)})
