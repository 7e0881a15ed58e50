"""Shapes and layout: Shape / Size start a ShapeValue (`../values.py`); Reshape, Flatten,
Transpose, Squeeze, Unsqueeze, Concat, Split, Expand, Tile, DepthToSpace, SpaceToDepth
run on tensors as the `Tensor.*` / `torch.*` calls, and on ShapeValues as numpy does."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..values import ShapeValue, from_tensor
from .operands import axes as normalized, axis, prod, sizes
from .registry import RULES

rule = RULES.register


@rule("Shape")
def shape(ctx):
    value = ctx.x(0)
    dims = list(value.shape) if isinstance(value, ShapeValue) else sizes(ctx.tensor(0))
    r = len(dims)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    start = max(0, min(r, axis(start, r)))
    end = r if end is None else max(0, min(r, axis(int(end), r)))
    return ShapeValue(np.array(dims[start:end] + [0], dtype=object)[:-1])


@rule("Size")
def size(ctx):
    value = ctx.x(0)
    dims = list(value.shape) if isinstance(value, ShapeValue) else sizes(ctx.tensor(0))
    return ShapeValue(np.array(prod(dims), dtype=object))


def _target_shape(ctx, dims: list, current: list) -> list:
    """ONNX Reshape: 0 copies the input's dim (unless allowzero), -1 is inferred."""
    if int(ctx.attr("allowzero", 0)):
        return list(dims)
    return [current[i] if (isinstance(d, int) and not isinstance(d, bool) and d == 0 and i < len(current)) else d
            for i, d in enumerate(dims)]


@rule("Reshape", produces=("Tensor.reshape",))
def reshape(ctx):
    if ctx.opset < 5:
        dims = list(ctx.attr("shape"))
    else:
        dims = ctx.ints(1, "shape")
    value = ctx.x(0)
    if isinstance(value, ShapeValue):
        target = [int(d) for d in _target_shape(ctx, dims, list(value.shape))]
        return ShapeValue(value.array.reshape(target), value.dtype)
    x = ctx.tensor(0)
    return x.reshape(_target_shape(ctx, dims, sizes(x)))


@rule("Flatten", produces=("Tensor.reshape", "torch.flatten"))
def flatten(ctx):
    x = ctx.tensor(0)
    a = axis(int(ctx.attr("axis", 1)), x.dim())
    if a == 1 and x.dim() >= 2:
        return torch.flatten(x, 1) if x.dim() > 2 else x
    if a == 0:
        return x.reshape(1, -1)
    return x.reshape(prod(sizes(x)[:a]), -1)


@rule("Transpose", produces=("Tensor.permute", "Tensor.transpose"))
def transpose(ctx):
    value = ctx.x(0)
    r = value.dim()
    perm = [int(p) for p in ctx.attr("perm", list(range(r - 1, -1, -1)))]
    if isinstance(value, ShapeValue):
        return ShapeValue(value.array.transpose(perm), value.dtype)
    if perm == list(range(r)):
        return ctx.tensor(0)
    moved = [i for i, p in enumerate(perm) if p != i]
    if len(moved) == 2:  # two dims swapped: written as such (and recognised in k.transpose(-2, -1))
        return ctx.tensor(0).transpose(moved[0], moved[1])
    return ctx.tensor(0).permute(perm)


def _axes_of(ctx, name: str = "axes"):
    """Squeeze/Unsqueeze axes: an attribute before opset 13, an input after."""
    if ctx.opset >= 13:
        return ctx.ints(1, name) if ctx.has(1) else None
    return ctx.attr(name)


@rule("Squeeze", produces=("Tensor.reshape", "torch.squeeze"))
def squeeze(ctx):
    value = ctx.x(0)
    values = _axes_of(ctx)
    if values is None:
        dims = [i for i, d in enumerate(value.shape) if d == 1]
    else:
        dims = normalized(values, value.dim())
    if isinstance(value, ShapeValue):
        return ShapeValue(value.array.reshape([d for i, d in enumerate(value.shape) if i not in dims]), value.dtype)
    x = ctx.tensor(0)
    for d in sorted(dims, reverse=True):
        x = torch.squeeze(x, d)
    return x


@rule("Unsqueeze", produces=("torch.unsqueeze",))
def unsqueeze(ctx):
    value = ctx.x(0)
    values = _axes_of(ctx)
    dims = sorted(normalized(values, value.dim() + len(values)))
    if isinstance(value, ShapeValue):
        array = value.array
        for d in dims:
            array = np.expand_dims(array, d)
        return ShapeValue(array, value.dtype)
    x = ctx.tensor(0)
    for d in dims:
        x = torch.unsqueeze(x, d)
    return x


@rule("Concat", produces=("torch.cat",))
def concat(ctx):
    present = [i for i in range(len(ctx.inputs)) if ctx.has(i)]
    values = [ctx.x(i) for i in present]
    a = int(ctx.attr("axis"))
    if any(isinstance(v, ShapeValue) for v in values) and all(ctx.known(i) is not None for i in present):
        parts = [v if isinstance(v, ShapeValue) else from_tensor(v) for v in values]
        r = parts[0].dim()
        return ShapeValue(np.concatenate([p.array for p in parts], axis=axis(a, r)), parts[0].dtype)
    tensors = [ctx.tensor(i) for i in present]
    tensors = [t for t in tensors if t.numel() or t.dim() != 1] or tensors  # ONNX allows empty 1-d parts
    if len(tensors) == 1:
        return tensors[0]
    return torch.cat(tensors, dim=axis(a, tensors[0].dim()))


@rule("Split", produces=("torch.split",))
def split(ctx):
    value = ctx.x(0)
    a = axis(int(ctx.attr("axis", 0)), value.dim())
    count = len(ctx.node.outputs)
    if ctx.opset >= 13:
        parts = ctx.ints(1, "split") if ctx.has(1) else None
    else:
        parts = ctx.attr("split")
    total = value.shape[a]
    if not parts:
        pieces = int(ctx.attr("num_outputs", count))
        step = -(-int(total) // pieces)
        parts = [min(step, int(total) - i * step) for i in range(pieces)]
    parts = [int(p) for p in parts]
    if isinstance(value, ShapeValue):
        bounds = np.cumsum(parts)[:-1]
        return [ShapeValue(p, value.dtype) for p in np.split(value.array, bounds, axis=a)]
    if len(parts) == 1:  # one part is the whole tensor (torch.onnx writes unbind of a size-1 dim so)
        return [ctx.tensor(0)]
    return list(torch.split(ctx.tensor(0), parts, dim=a))


@rule("Expand", produces=("Tensor.expand", "Tensor.reshape"))
def expand(ctx):
    dims = ctx.ints(1, "shape")
    sized = _expanded_sizes(ctx, dims)
    if sized is not None:
        return sized
    x = ctx.tensor(0)
    current = sizes(x)
    r = max(len(dims), len(current))
    current = [1] * (r - len(current)) + current
    dims = [1] * (r - len(dims)) + list(dims)
    target = [c if (isinstance(d, int) and d == 1) else d for c, d in zip(current, dims)]
    if x.dim() < r:
        x = x.reshape(current)
    if all(int(t) == int(c) for t, c in zip(target, current)):
        return x
    return x.expand(target)


def _expanded_sizes(ctx, dims: list):
    """Sizes (or a small integer constant) expanded to a known count stay sizes: torch.onnx's
    torch.tile pads its repeats with Expand(ones, rank difference) before a Concat."""
    value = ctx.known(0)
    if value is None or not all(type(d) is int for d in dims) or int(np.prod(dims)) > 64:
        return None
    if not isinstance(value, ShapeValue):
        if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool or value.numel() > 64:
            return None
        value = from_tensor(value)
    if not isinstance(ctx.x(1), ShapeValue) and not isinstance(ctx.x(0), ShapeValue):
        return None  # constants only: the folding made it already
    return ShapeValue(np.broadcast_to(value.array, np.broadcast_shapes(value.shape, tuple(dims))).copy(), value.dtype)


@rule("Tile", produces=("Tensor.repeat",))
def tile(ctx):
    repeats = ctx.ints(1, "repeats")
    value = ctx.x(0)
    if isinstance(value, ShapeValue):  # sizes repeated (tensor_split's section sizes)
        return ShapeValue(np.tile(value.array, [int(r) for r in repeats]), value.dtype)
    return ctx.tensor(0).repeat(repeats)


@rule("DepthToSpace", produces=("F.pixel_shuffle", "Tensor.permute", "Tensor.reshape"))
def depth_to_space(ctx):
    x = ctx.tensor(0)
    b = int(ctx.attr("blocksize"))
    if ctx.attr("mode", "DCR") == "CRD":
        return F.pixel_shuffle(x, b)
    n, c, h, w = sizes(x)
    y = x.reshape(n, b, b, c // (b * b), h, w).permute(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


@rule("SpaceToDepth", produces=("F.pixel_unshuffle", "Tensor.permute", "Tensor.reshape"))
def space_to_depth(ctx):
    x = ctx.tensor(0)
    b = int(ctx.attr("blocksize"))
    if ctx.attr("mode", "DCR") == "CRD":  # opset 28
        return F.pixel_unshuffle(x, b)
    n, c, h, w = sizes(x)
    y = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


@rule("Trilu", produces=("torch.tril", "torch.triu"))
def trilu(ctx):
    x = ctx.tensor(0)
    k = int(ctx.scalar(1, "k")) if ctx.has(1) else 0
    return torch.triu(x, k) if int(ctx.attr("upper", 1)) else torch.tril(x, k)
