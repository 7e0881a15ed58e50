"""Shape-only operators: view/reshape/flatten/unflatten -> Reshape (constant shapes, or shapes
computed at run time where they follow the input), view(dtype) -> BitCast,
permute/transpose/t/movedim -> Transpose, squeeze/unsqueeze -> Squeeze/Unsqueeze."""
from __future__ import annotations

from ....errors import Unsupported
from ...shape_lists import reshape_target, shape_items
from ..builder import axis, int_list
from ..dtypes import onnx_type
from ..registry import LOWERINGS
from ..expressions import shape_tensor


def _reshape(ctx, op, target: list[int], out: str | None = None):
    target = [int(d) for d in target]
    if target.count(-1) > 1:
        raise Unsupported(f"shape {target} has more than one unknown dimension")
    allowzero = 1 if 0 in target else None
    if allowzero and -1 in target:
        raise Unsupported("a shape with both 0 and -1")
    return ctx.node("Reshape", [ctx.x(op), ctx.const(target, hint="shape")], out or ctx.y(op),
                  allowzero=allowzero)


def _reshape_to_output(ctx, op):
    """Reshape to the output operand's shape; where it follows the input (`?` dims), to the
    shape computed at run time from the sizes it is made of (shape_lists.reshape_target)."""
    dst = ctx.shape(op.outputs[0])
    if all(d >= 0 for d in dst):
        _reshape(ctx, op, dst)
        return
    items, operands = reshape_target(op)
    ctx.node("Reshape", [ctx.x(op), shape_tensor(ctx, items, operands)], ctx.y(op))


@LOWERINGS.register("Tensor.view", "Tensor.reshape", "torch.reshape")
def reshape(ctx, op):
    if "dtype" in op.params:
        bitcast(ctx, op)
        return
    shape = op.params.get("shape")
    if len(op.inputs) > 1 and shape_items(op.inputs[1]) is not None:  # a list of sizes, lowered as a tensor
        ctx.node("Reshape", [ctx.x(op), op.inputs[1].name], ctx.y(op))
        return
    if shape is None or len(op.inputs) > 1:
        _reshape_to_output(ctx, op)
        return
    _reshape(ctx, op, int_list(shape))


def bitcast(ctx, op):
    """Tensor.view(dtype): the same bytes read as another type, ONNX's BitCast (opset 26)."""
    src, dst = ctx.dtype(op.inputs[0]), ctx.dtype(op.outputs[0])
    if ctx.opset < 26:
        raise Unsupported(f"view({op.params['dtype']}) reinterprets bytes: ONNX has BitCast from opset 26, "
                          f"this file is opset {ctx.opset}")
    if ctx.shape(op.inputs[0]) != ctx.shape(op.outputs[0]):
        raise Unsupported(f"view from {src} to {dst} changes the last dimension; BitCast keeps widths")
    ctx.node("BitCast", [ctx.x(op)], ctx.y(op), to=onnx_type(dst))


@LOWERINGS.register("torch.flatten", "Tensor.flatten", "nn.Flatten", "F.flatten", "nn.Unflatten",
                    "Tensor.unflatten", "torch.unflatten", "Tensor.view_as", "Tensor.reshape_as")
def reshape_to_output(ctx, op):
    _reshape_to_output(ctx, op)


@LOWERINGS.register("Tensor.permute", "torch.permute")
def permute(ctx, op):
    rank = ctx.rank(op.inputs[0])
    dims = op.params.get("dims")
    ctx.node("Transpose", [ctx.x(op)], ctx.y(op), perm=[axis(d, rank) for d in int_list(dims)])


@LOWERINGS.register("Tensor.movedim", "torch.movedim", "Tensor.moveaxis", "torch.moveaxis")
def movedim(ctx, op):
    rank = ctx.rank(op.inputs[0])
    src = [axis(d, rank) for d in int_list(op.params["source"])]
    dst = [axis(d, rank) for d in int_list(op.params["destination"])]
    rest = iter(d for d in range(rank) if d not in src)
    placed = dict(zip(dst, src))
    ctx.node("Transpose", [ctx.x(op)], ctx.y(op),
           perm=[placed[i] if i in placed else next(rest) for i in range(rank)])


@LOWERINGS.register("Tensor.transpose", "torch.transpose", "torch.swapaxes", "Tensor.swapaxes")
def transpose(ctx, op):
    rank = ctx.rank(op.inputs[0])
    perm = list(range(rank))
    d0 = axis(int(op.params.get("dim0", op.params.get("axis0", 0))), rank)
    d1 = axis(int(op.params.get("dim1", op.params.get("axis1", 0))), rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    ctx.node("Transpose", [ctx.x(op)], ctx.y(op), perm=perm)


@LOWERINGS.register("torch.t", "Tensor.t")
def t(ctx, op):
    if ctx.rank(op.inputs[0]) < 2:
        ctx.node("Identity", [ctx.x(op)], ctx.y(op))
        return
    ctx.node("Transpose", [ctx.x(op)], ctx.y(op), perm=[1, 0])


@LOWERINGS.register("torch.unsqueeze", "Tensor.unsqueeze")
def unsqueeze(ctx, op):
    dim = axis(int(op.params["dim"]), ctx.rank(op.outputs[0]))
    ctx.node("Unsqueeze", [ctx.x(op), ctx.const([dim], hint="axes")], ctx.y(op))


@LOWERINGS.register("torch.squeeze", "Tensor.squeeze")
def squeeze(ctx, op):
    shape = ctx.shape(op.inputs[0])
    dims = op.params.get("dim")
    candidates = range(len(shape)) if dims is None else [axis(d, len(shape)) for d in int_list(dims)]
    if any(shape[d] < 0 for d in candidates):
        raise Unsupported("squeeze of a dynamic dimension")
    squeezed = [d for d in candidates if shape[d] == 1]  # torch skips non-1 dims silently
    if not squeezed:
        ctx.node("Identity", [ctx.x(op)], ctx.y(op))
        return
    ctx.node("Squeeze", [ctx.x(op), ctx.const(squeezed, hint="axes")], ctx.y(op))
