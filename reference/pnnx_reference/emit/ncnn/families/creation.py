"""Tensors made from a value or another tensor: fill -> a MemoryData of the output's shape;
zeros_like / ones_like / full_like -> the same, or Clip(x, value, value) over a shape that follows
the input; Tensor.copy_ -> its source (Reshape + Tile when it broadcasts); arange over a size that
follows the input -> a run-time ramp."""
from __future__ import annotations

import numpy as np

from .... import expression as ex
from ....errors import AlongBatch, Unsupported
from ..arithmetic import BINARY
from ..context import Context, dims_params, param, required_inputs
from ..layers import Weight
from ..ramps import ramp
from ..registry import LEADING, LOWERINGS, MOVES_DATA
from ..shape_expr import is_dynamic, scalar_item
from ..truth import INTEGRAL


def _constant(ctx: Context, shape: list[int], value: float, out: str) -> str:
    """A MemoryData of ncnn `shape` holding `value` everywhere."""
    if min(shape) < 1 or len(shape) > 4:
        raise Unsupported(f"fill of ncnn shape {shape} (dynamic, empty or rank > 4) is not lowered")
    data = np.full(int(np.prod(shape)), value, dtype=np.float32)
    ctx.emit("MemoryData", "fill", [], [out], dims_params(shape), [Weight(data, tagged=False)])
    return out


@LOWERINGS.register("Tensor.fill", "Tensor.fill_", batch=LEADING, **MOVES_DATA)
def fill(ctx: Context, op) -> None:
    """A MemoryData of the output's shape holding the value; a 0-d tensor value is added to one
    of zeros (reshaped to all-1 dims of the same rank, so ncnn broadcasts it everywhere)."""
    out = op.outputs[0].name
    shape = ctx.shape(op.outputs[0]) or [1]
    value = param(op, "value")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _constant(ctx, shape, value, out)
        return
    operand = op.input("value")
    if operand is None or ctx.torch_shape(operand) != []:
        raise Unsupported("fill needs a number or a 0-d tensor value")
    scalar = ctx.temp(out)
    ctx.emit("Reshape", "reshape", [ctx.blob(operand)], [scalar], dims_params([1] * len(shape)))
    zeros = _constant(ctx, shape, 0.0, ctx.temp(out))
    ctx.emit("BinaryOp", "fill", [zeros, scalar], [out], {0: BINARY["add"][0]})


_LIKE_VALUES = {"torch.zeros_like": 0, "torch.ones_like": 1}


def _like_value(op):
    """The fill value of zeros_like / ones_like / full_like, as the output dtype holds it."""
    value = _LIKE_VALUES.get(op.type, param(op, "fill_value"))
    if isinstance(value, complex) or not isinstance(value, (bool, int, float)):
        raise Unsupported(f"fill value {value!r} has no ncnn form")
    dtype = op.outputs[0].dtype
    return float(bool(value)) if dtype == "bool" else float(int(value)) if dtype in INTEGRAL else float(value)


@LOWERINGS.register("torch.zeros_like", "torch.ones_like", "torch.full_like", batch=LEADING, **MOVES_DATA)
def filled_like(ctx: Context, op) -> None:
    """A tensor of x's shape holding one value (a constant x is folded before lowering): a
    MemoryData of that shape, or over a shape that follows the input Clip(x, value, value), which
    is the value for every x but NaN, infinities included (x * 0 + value was NaN where an int64
    clamped to +-2^63 is inf in fp16 storage); a float x may hold NaN, which ncnn's Clip keeps
    on some paths, so that one is refused."""
    x, out = op.inputs[0], op.outputs[0]
    value = _like_value(op)
    shape = ctx.shape(out) or [1]
    if not is_dynamic(shape):
        _constant(ctx, shape, value, out.name)
        return
    if x.dtype not in INTEGRAL:
        raise Unsupported(f"{op.type} of a {x.dtype} tensor whose shape follows the input: a NaN in it "
                          "would stay NaN (ncnn's Clip keeps NaN on some paths)")
    ctx.emit("Clip", "fill", [ctx.blob(x)], [out.name], {0: value, 1: value})


@LOWERINGS.register("Tensor.copy", batch=LEADING, **MOVES_DATA)
def copy_(ctx: Context, op) -> None:
    """y.copy_(src) is src broadcast to y's shape (y's values are all overwritten)."""
    dst, src = required_inputs(op, "input", "src")
    out = op.outputs[0]
    in_shape, out_shape = ctx.shape(src), ctx.shape(dst)
    if in_shape == out_shape:
        ctx.alias(out, src)
        return
    if len(in_shape) > len(out_shape):
        raise Unsupported(f"copy_ of a {tuple(ctx.torch_shape(src))} source into "
                          f"{tuple(ctx.torch_shape(dst))} is not lowered")
    padded = [1] * (len(out_shape) - len(in_shape)) + in_shape
    if any(i not in (1, o) for i, o in zip(padded, out_shape)):
        raise Unsupported(f"copy_ source {tuple(ctx.torch_shape(src))} does not broadcast to "
                          f"{tuple(ctx.torch_shape(dst))}")
    blob = ctx.blob(src)
    if len(padded) != len(in_shape):
        blob, reshaped = ctx.temp(out.name), blob
        ctx.emit("Reshape", "copy", [reshaped], [blob], dims_params(padded))
    repeats = [o // i for i, o in zip(padded, out_shape)]
    ctx.emit("Tile", "copy", [blob], [out.name], {2: repeats})


@LOWERINGS.register("torch.arange", batch=LEADING, **MOVES_DATA)
def arange(ctx: Context, op) -> None:
    """arange(size(x, d)) (position ids over a length that follows the input): a run-time ramp
    (ramps.py); a constant arange is folded before lowering."""
    out = op.outputs[0]
    end = op.input("end")
    if end is None or op.input("start") is not None or op.input("step") is not None \
            or param(op, "start", 0) != 0 or param(op, "step", 1) != 1:
        raise Unsupported("arange other than arange(size) (start 0, step 1) is not lowered")
    if ctx.batch_axis(out) is not None:
        raise AlongBatch("a ramp has no batch axis")
    tree, operands = scalar_item(end)
    if not (isinstance(tree, ex.Call) and tree.func == "size" and len(tree.args) == 2
            and isinstance(tree.args[0], ex.Input) and isinstance(tree.args[1], ex.Literal)):
        raise Unsupported(f"arange to {ex.to_string(tree)}: only arange(size(tensor, dim)) is lowered")
    ramp(ctx, operands[tree.args[0].index], int(tree.args[1].value), out.name, out.name)
