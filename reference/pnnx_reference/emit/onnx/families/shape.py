"""Shape-only operators: view/reshape/flatten/unflatten -> Reshape (constant shapes, or shapes
computed at run time where they follow the input), view(dtype) -> BitCast,
permute/transpose/t/movedim -> Transpose, squeeze/unsqueeze -> Squeeze/Unsqueeze."""
from __future__ import annotations

from ....errors import Unsupported
from ...shape_lists import reshape_target, shape_items
from ..builder import axis, int_list
from ..dtypes import onnx_type
from ..registry import LOWERINGS
from .expression import shape_tensor


def _reshape(b, op, target: list[int], out: str | None = None):
    target = [int(d) for d in target]
    if target.count(-1) > 1:
        raise Unsupported(f"shape {target} has more than one unknown dimension")
    allowzero = 1 if 0 in target else None
    if allowzero and -1 in target:
        raise Unsupported("a shape with both 0 and -1")
    return b.node("Reshape", [b.x(op), b.const(target, hint="shape")], out or b.y(op),
                  allowzero=allowzero)


def _reshape_to_output(b, op):
    """Reshape to the output operand's shape; where it follows the input (`?` dims), to the
    shape computed at run time from the sizes it is made of (shape_lists.reshape_target)."""
    dst = b.shape(op.outputs[0])
    if all(d >= 0 for d in dst):
        _reshape(b, op, dst)
        return
    items, operands = reshape_target(op)
    b.node("Reshape", [b.x(op), shape_tensor(b, items, operands)], b.y(op))


@LOWERINGS.register("Tensor.view", "Tensor.reshape", "torch.reshape")
def reshape(b, op):
    if "dtype" in op.params:
        bitcast(b, op)
        return
    shape = op.params.get("shape")
    if len(op.inputs) > 1 and shape_items(op.inputs[1]) is not None:  # a list of sizes, lowered as a tensor
        b.node("Reshape", [b.x(op), op.inputs[1].name], b.y(op))
        return
    if shape is None or len(op.inputs) > 1:
        _reshape_to_output(b, op)
        return
    _reshape(b, op, int_list(shape))


def bitcast(b, op):
    """Tensor.view(dtype): the same bytes read as another type, ONNX's BitCast (opset 26)."""
    src, dst = b.dtype(op.inputs[0]), b.dtype(op.outputs[0])
    if b.opset < 26:
        raise Unsupported(f"view({op.params['dtype']}) reinterprets bytes: ONNX has BitCast from opset 26, "
                          f"this file is opset {b.opset}")
    if b.shape(op.inputs[0]) != b.shape(op.outputs[0]):
        raise Unsupported(f"view from {src} to {dst} changes the last dimension; BitCast keeps widths")
    b.node("BitCast", [b.x(op)], b.y(op), to=onnx_type(dst))


@LOWERINGS.register("torch.flatten", "Tensor.flatten", "nn.Flatten", "F.flatten", "nn.Unflatten",
                    "Tensor.unflatten", "torch.unflatten", "Tensor.view_as", "Tensor.reshape_as")
def reshape_to_output(b, op):
    _reshape_to_output(b, op)


@LOWERINGS.register("Tensor.permute", "torch.permute")
def permute(b, op):
    rank = b.rank(op.inputs[0])
    dims = op.params.get("dims")
    b.node("Transpose", [b.x(op)], b.y(op), perm=[axis(d, rank) for d in int_list(dims)])


@LOWERINGS.register("Tensor.movedim", "torch.movedim", "Tensor.moveaxis", "torch.moveaxis")
def movedim(b, op):
    rank = b.rank(op.inputs[0])
    src = [axis(d, rank) for d in int_list(op.params["source"])]
    dst = [axis(d, rank) for d in int_list(op.params["destination"])]
    rest = iter(d for d in range(rank) if d not in src)
    placed = dict(zip(dst, src))
    b.node("Transpose", [b.x(op)], b.y(op),
           perm=[placed[i] if i in placed else next(rest) for i in range(rank)])


@LOWERINGS.register("Tensor.transpose", "torch.transpose", "torch.swapaxes", "Tensor.swapaxes")
def transpose(b, op):
    rank = b.rank(op.inputs[0])
    perm = list(range(rank))
    d0 = axis(int(op.params.get("dim0", op.params.get("axis0", 0))), rank)
    d1 = axis(int(op.params.get("dim1", op.params.get("axis1", 0))), rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    b.node("Transpose", [b.x(op)], b.y(op), perm=perm)


@LOWERINGS.register("torch.t", "Tensor.t")
def t(b, op):
    if b.rank(op.inputs[0]) < 2:
        b.node("Identity", [b.x(op)], b.y(op))
        return
    b.node("Transpose", [b.x(op)], b.y(op), perm=[1, 0])


@LOWERINGS.register("torch.unsqueeze", "Tensor.unsqueeze")
def unsqueeze(b, op):
    dim = axis(int(op.params["dim"]), b.rank(op.outputs[0]))
    b.node("Unsqueeze", [b.x(op), b.const([dim], hint="axes")], b.y(op))


@LOWERINGS.register("torch.squeeze", "Tensor.squeeze")
def squeeze(b, op):
    shape = b.shape(op.inputs[0])
    dims = op.params.get("dim")
    candidates = range(len(shape)) if dims is None else [axis(d, len(shape)) for d in int_list(dims)]
    if any(shape[d] < 0 for d in candidates):
        raise Unsupported("squeeze of a dynamic dimension")
    squeezed = [d for d in candidates if shape[d] == 1]  # torch skips non-1 dims silently
    if not squeezed:
        b.node("Identity", [b.x(op)], b.y(op))
        return
    b.node("Squeeze", [b.x(op), b.const(squeezed, hint="axes")], b.y(op))
