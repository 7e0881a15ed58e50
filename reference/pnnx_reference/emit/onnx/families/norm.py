"""Normalisation: BatchNormalization, LayerNormalization, GroupNormalization,
InstanceNormalization, RMSNormalization, LRN; F.normalize decomposes (ONNX's LpNormalization
has no eps)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import axis, int_list
from ..dtypes import numpy_type
from ..registry import LOWERINGS


def _filled(ctx, op, value: float, shape) -> str:
    dt = ctx.dtype(op.inputs[0])
    return ctx.const(np.full(shape, value, numpy_type(dt)), dt, "ones" if value else "zeros")


def _affine(ctx, op, shape) -> tuple[str, str]:
    """Scale and bias initializers (ones/zeros when the module has none)."""
    scale = ctx.attr_weight(op, "weight") if "weight" in op.attrs else _filled(ctx, op, 1.0, shape)
    bias = ctx.attr_weight(op, "bias") if "bias" in op.attrs else _filled(ctx, op, 0.0, shape)
    return scale, bias


def _input_or(ctx, op, key, position, value, shape):
    operand = op.input(key, position)
    return operand.name if operand is not None else _filled(ctx, op, value, shape)


@LOWERINGS.register("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.SyncBatchNorm")
def batch_norm_module(ctx, op):
    if "running_mean" not in op.attrs:
        raise Unsupported("track_running_stats=False normalises with batch statistics")
    n = op.attrs["running_mean"].shape[0]
    scale, bias = _affine(ctx, op, n)
    ctx.node("BatchNormalization", [ctx.x(op), scale, bias, ctx.attr_weight(op, "running_mean"),
                                  ctx.attr_weight(op, "running_var")], ctx.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.batch_norm")
def batch_norm_function(ctx, op):
    if op.params.get("training"):
        raise Unsupported("training=True normalises with batch statistics")
    mean, var = op.input("running_mean", 1), op.input("running_var", 2)
    if mean is None or var is None:
        raise Unsupported("running_mean and running_var must be operands")
    n = ctx.shape(mean)[0]
    scale = _input_or(ctx, op, "weight", 3, 1.0, n)
    bias = _input_or(ctx, op, "bias", 4, 0.0, n)
    ctx.node("BatchNormalization", [ctx.x(op), scale, bias, mean.name, var.name], ctx.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.LayerNorm")
def layer_norm_module(ctx, op):
    shape = int_list(op.params["normalized_shape"])
    scale, bias = _affine(ctx, op, shape)
    ctx.node("LayerNormalization", [ctx.x(op), scale, bias], ctx.y(op), axis=-len(shape),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.layer_norm")
def layer_norm_function(ctx, op):
    shape = int_list(op.params["normalized_shape"])
    scale = _input_or(ctx, op, "weight", 1, 1.0, shape)
    bias = _input_or(ctx, op, "bias", 2, 0.0, shape)
    ctx.node("LayerNormalization", [ctx.x(op), scale, bias], ctx.y(op), axis=-len(shape),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.GroupNorm")
def group_norm_module(ctx, op):
    scale, bias = _affine(ctx, op, int(op.params["num_channels"]))
    ctx.node("GroupNormalization", [ctx.x(op), scale, bias], ctx.y(op),
           num_groups=int(op.params["num_groups"]), epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.group_norm")
def group_norm_function(ctx, op):
    n = ctx.shape(op.inputs[0])[1]
    scale = _input_or(ctx, op, "weight", 1, 1.0, n)
    bias = _input_or(ctx, op, "bias", 2, 0.0, n)
    ctx.node("GroupNormalization", [ctx.x(op), scale, bias], ctx.y(op),
           num_groups=int(op.params["num_groups"]), epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d",
                    unbatched_rank=lambda op: int(op.type[-2]) + 1)
def instance_norm_module(ctx, op):
    spatial = int(op.type[-2])
    if ctx.rank(op.inputs[0]) != spatial + 2:
        raise Unsupported(f"input of rank {ctx.rank(op.inputs[0])} (expected {spatial + 1} or {spatial + 2})")
    scale, bias = _affine(ctx, op, _instance_norm_channels(ctx, op))
    eps = float(op.params.get("eps", 1e-5))
    if "running_mean" in op.attrs:  # track_running_stats: eval uses the running statistics
        ctx.node("BatchNormalization", [ctx.x(op), scale, bias, ctx.attr_weight(op, "running_mean"),
                                      ctx.attr_weight(op, "running_var")], ctx.y(op), epsilon=eps)
        return
    ctx.node("InstanceNormalization", [ctx.x(op), scale, bias], ctx.y(op), epsilon=eps)


def _instance_norm_channels(ctx, op) -> int:
    """torch normalises the input's channels: without weights or running statistics it only
    warns when they are not num_features (an InstanceNorm1d(8) given (4, L) is unbatched)."""
    channels = ctx.shape(op.inputs[0])[1]
    if channels < 0 or "weight" in op.attrs or "running_mean" in op.attrs:
        return int(op.params["num_features"])
    return channels


@LOWERINGS.register("F.instance_norm")
def instance_norm_function(ctx, op):
    if op.input("running_mean", 1) is not None and not op.params.get("use_input_stats", True):
        raise Unsupported("use_input_stats=False with running statistics")
    n = ctx.shape(op.inputs[0])[1]
    scale = _input_or(ctx, op, "weight", 3, 1.0, n)
    bias = _input_or(ctx, op, "bias", 4, 0.0, n)
    ctx.node("InstanceNormalization", [ctx.x(op), scale, bias], ctx.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.RMSNorm", "F.rms_norm")
def rms_norm(ctx, op):
    if ctx.opset < 23:
        raise Unsupported("RMSNormalization needs opset 23")
    shape = int_list(op.params["normalized_shape"])
    if op.type == "nn.RMSNorm":
        scale = ctx.attr_weight(op, "weight") if "weight" in op.attrs else None
    else:
        w = op.input("weight", 1)
        scale = w.name if w is not None else None
    if scale is None:
        scale = ctx.const(np.ones(shape, numpy_type(ctx.dtype(op.inputs[0]))), ctx.dtype(op.inputs[0]), "ones")
    eps = op.params.get("eps")
    eps = float(np.finfo(numpy_type(ctx.dtype(op.inputs[0]))).eps) if eps is None else float(eps)
    ctx.node("RMSNormalization", [ctx.x(op), scale], ctx.y(op), axis=-len(shape), epsilon=eps)


@LOWERINGS.register("nn.LocalResponseNorm", "F.local_response_norm")
def local_response_norm(ctx, op):
    """(N, C, ...) of any rank >= 3: the window runs over channels only, so onnxruntime's 4-D
    LRN sees the spatial axes folded into one, (N, C, S, 1), and the result takes x's shape."""
    size = int(op.params["size"])
    rank = ctx.rank(op.inputs[0])
    if rank < 3:
        raise Unsupported(f"input of rank {rank}: torch needs (N, C, ...) with a spatial axis")
    if size % 2 == 0:
        raise Unsupported("even size: torch and ONNX LRN centre the window differently")
    x = ctx.x(op) if rank == 4 else ctx.node("Reshape", [ctx.x(op), ctx.const([0, 0, -1, 1], hint="shape")])
    y = ctx.node("LRN", [x], ctx.y(op) if rank == 4 else 1, size=size,
               alpha=float(op.params.get("alpha", 1e-4)), beta=float(op.params.get("beta", 0.75)),
               bias=float(op.params.get("k", 1.0)))
    if rank != 4:
        ctx.node("Reshape", [y, ctx.node("Shape", [ctx.x(op)])], ctx.y(op))


@LOWERINGS.register("F.normalize")
def normalize(ctx, op):
    p = float(op.params.get("p", 2.0))
    reduce = {1.0: "ReduceL1", 2.0: "ReduceL2"}.get(p)
    if reduce is None:
        raise Unsupported(f"p={p}")
    dim = axis(int(op.params.get("dim", 1)), ctx.rank(op.inputs[0]))
    norm = ctx.node(reduce, [ctx.x(op), ctx.const([dim], hint="axes")], keepdims=1)
    eps = ctx.const(float(op.params.get("eps", 1e-12)), ctx.dtype(op.inputs[0]), "eps")
    ctx.node("Div", [ctx.x(op), ctx.node("Max", [norm, eps])], ctx.y(op))
