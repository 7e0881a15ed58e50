"""Tensors made from a shape, a value or another tensor: new_zeros/new_ones/new_full/new_empty,
*_like, fill, zero_, zeros/ones/full/empty of a size list that follows the input -> ConstantOfShape; copy_ (src broadcast to input's shape) -> Expand;
one_hot -> OneHot; arange -> Range (bounds the graph computes are read at run time)."""
from __future__ import annotations

import numpy as np
from onnx import helper

from ....errors import Unsupported
from ...shape_lists import shape_items
from ..dtypes import numpy_type, onnx_type
from ..registry import LOWERINGS


def _constant_of_shape(ctx, op, value, target=None):
    """ConstantOfShape: a static target shape is a constant, a dynamic one comes from input 0
    (its Shape, or `target`: the shape tensor a size list computes)."""
    out = op.outputs[0]
    dt = ctx.dtype(out)
    shape = ctx.shape(out)
    if min(shape, default=0) >= 0:
        target = ctx.const(shape, hint="shape")
    elif target is None:
        target = ctx.node("Shape", [ctx.x(op)])
    fill = helper.make_tensor("value", onnx_type(dt), [1],
                              np.asarray([value], numpy_type(dt)).tolist() if dt != "bool"
                              else [bool(value)])
    ctx.node("ConstantOfShape", [target], ctx.y(op), value=fill)


def _filled(value_of):
    def lower(ctx, op):
        if op.type.startswith("Tensor.new_") and min(ctx.shape(op.outputs[0]), default=0) < 0:
            raise Unsupported("dynamic size")
        _constant_of_shape(ctx, op, value_of(op))
    return lower


LOWERINGS.register("Tensor.new_zeros", "Tensor.new_empty", "torch.zeros_like", "torch.empty_like",
                   "Tensor.zero_")(_filled(lambda op: 0))
LOWERINGS.register("Tensor.new_ones", "torch.ones_like")(_filled(lambda op: 1))
LOWERINGS.register("Tensor.new_full", "torch.full_like")(_filled(lambda op: op.params["fill_value"]))
LOWERINGS.register("Tensor.fill", "Tensor.fill_")(_filled(lambda op: op.params["value"]))


_SIZED_VALUES = {"torch.zeros": lambda op: 0, "torch.empty": lambda op: 0, "torch.ones": lambda op: 1,
                 "torch.full": lambda op: op.params["fill_value"]}


@LOWERINGS.register(*_SIZED_VALUES)
def sized(ctx, op):
    """torch.zeros/ones/full/empty of a size list (a constant one is folded before lowering):
    the list is the int64 shape tensor its pnnx.Expression computes (T5's cross-attention bias
    torch.zeros(1, heads, L, S) over lengths that follow the input)."""
    size = op.input("size", 0)
    if size is None or shape_items(size) is None:
        raise Unsupported(f"{op.type} without a size list")
    _constant_of_shape(ctx, op, _SIZED_VALUES[op.type](op), size.name)


@LOWERINGS.register("Tensor.copy", "Tensor.copy_")
def copy(ctx, op):
    """input.copy_(src): src broadcast to input's shape, in input's dtype."""
    src = op.input("src", 1)
    if src is None:
        raise Unsupported("no src operand")
    name = src.name
    if ctx.dtype(src) != ctx.dtype(op.inputs[0]):
        name = ctx.node("Cast", [name], to=onnx_type(ctx.dtype(op.inputs[0])))
    shape = ctx.shape(op.outputs[0])
    target = ctx.const(shape, hint="shape") if min(shape, default=0) >= 0 else \
        ctx.node("Shape", [ctx.x(op)])
    ctx.node("Expand", [name, target], ctx.y(op))


@LOWERINGS.register("F.one_hot")
def one_hot(ctx, op):
    depth = int(op.params.get("num_classes", -1))
    if depth < 0:
        raise Unsupported("num_classes=-1 depends on the data")
    ctx.node("OneHot", [ctx.x(op), ctx.const([depth], hint="depth"), ctx.const([0, 1], hint="values")],
           ctx.y(op), axis=-1)


@LOWERINGS.register("torch.arange")
def arange(ctx, op):
    """torch.arange(start, end, step): each bound a number or a 0-dim operand
    (`torch.arange(x[3], x[4], x[6] * 0.1)`), cast to the result's type as Range needs."""
    dt = ctx.dtype(op.outputs[0])
    bounds = []
    for key, default in (("start", 0), ("end", None), ("step", 1)):
        operand = op.input(key)
        if operand is not None:
            bounds.append(ctx.node("Cast", [operand.name], to=onnx_type(dt)))
            continue
        value = op.params.get(key, default)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise Unsupported(f"arange {key}={value!r} is not a number")
        bounds.append(ctx.const(value, dtype=dt, hint=key))
    ctx.node("Range", bounds, ctx.y(op))
