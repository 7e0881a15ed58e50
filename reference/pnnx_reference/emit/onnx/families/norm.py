"""Normalisation: BatchNormalization, LayerNormalization, GroupNormalization,
InstanceNormalization, RMSNormalization, LRN; F.normalize decomposes (ONNX's LpNormalization
has no eps)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import axis, int_list
from ..dtypes import numpy_type
from ..registry import LOWERINGS


def _filled(b, op, value: float, shape) -> str:
    dt = b.dtype(op.inputs[0])
    return b.const(np.full(shape, value, numpy_type(dt)), dt, "ones" if value else "zeros")


def _affine(b, op, shape) -> tuple[str, str]:
    """Scale and bias initializers (ones/zeros when the module has none)."""
    scale = b.attr_weight(op, "weight") if "weight" in op.attrs else _filled(b, op, 1.0, shape)
    bias = b.attr_weight(op, "bias") if "bias" in op.attrs else _filled(b, op, 0.0, shape)
    return scale, bias


def _input_or(b, op, key, position, value, shape):
    operand = op.input(key, position)
    return operand.name if operand is not None else _filled(b, op, value, shape)


@LOWERINGS.register("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.SyncBatchNorm")
def batch_norm_module(b, op):
    if "running_mean" not in op.attrs:
        raise Unsupported("track_running_stats=False normalises with batch statistics")
    n = op.attrs["running_mean"].shape[0]
    scale, bias = _affine(b, op, n)
    b.node("BatchNormalization", [b.x(op), scale, bias, b.attr_weight(op, "running_mean"),
                                  b.attr_weight(op, "running_var")], b.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.batch_norm")
def batch_norm_function(b, op):
    if op.params.get("training"):
        raise Unsupported("training=True normalises with batch statistics")
    mean, var = op.input("running_mean", 1), op.input("running_var", 2)
    if mean is None or var is None:
        raise Unsupported("running_mean and running_var must be operands")
    n = b.shape(mean)[0]
    scale = _input_or(b, op, "weight", 3, 1.0, n)
    bias = _input_or(b, op, "bias", 4, 0.0, n)
    b.node("BatchNormalization", [b.x(op), scale, bias, mean.name, var.name], b.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.LayerNorm")
def layer_norm_module(b, op):
    shape = int_list(op.params["normalized_shape"])
    scale, bias = _affine(b, op, shape)
    b.node("LayerNormalization", [b.x(op), scale, bias], b.y(op), axis=-len(shape),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.layer_norm")
def layer_norm_function(b, op):
    shape = int_list(op.params["normalized_shape"])
    scale = _input_or(b, op, "weight", 1, 1.0, shape)
    bias = _input_or(b, op, "bias", 2, 0.0, shape)
    b.node("LayerNormalization", [b.x(op), scale, bias], b.y(op), axis=-len(shape),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.GroupNorm")
def group_norm_module(b, op):
    scale, bias = _affine(b, op, int(op.params["num_channels"]))
    b.node("GroupNormalization", [b.x(op), scale, bias], b.y(op),
           num_groups=int(op.params["num_groups"]), epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("F.group_norm")
def group_norm_function(b, op):
    n = b.shape(op.inputs[0])[1]
    scale = _input_or(b, op, "weight", 1, 1.0, n)
    bias = _input_or(b, op, "bias", 2, 0.0, n)
    b.node("GroupNormalization", [b.x(op), scale, bias], b.y(op),
           num_groups=int(op.params["num_groups"]), epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d",
                    unbatched_rank=lambda op: int(op.type[-2]) + 1)
def instance_norm_module(b, op):
    spatial = int(op.type[-2])
    if b.rank(op.inputs[0]) != spatial + 2:
        raise Unsupported(f"input of rank {b.rank(op.inputs[0])} (expected {spatial + 1} or {spatial + 2})")
    scale, bias = _affine(b, op, _instance_norm_channels(b, op))
    eps = float(op.params.get("eps", 1e-5))
    if "running_mean" in op.attrs:  # track_running_stats: eval uses the running statistics
        b.node("BatchNormalization", [b.x(op), scale, bias, b.attr_weight(op, "running_mean"),
                                      b.attr_weight(op, "running_var")], b.y(op), epsilon=eps)
        return
    b.node("InstanceNormalization", [b.x(op), scale, bias], b.y(op), epsilon=eps)


def _instance_norm_channels(b, op) -> int:
    """torch normalises the input's channels: without weights or running statistics it only
    warns when they are not num_features (an InstanceNorm1d(8) given (4, L) is unbatched)."""
    channels = b.shape(op.inputs[0])[1]
    if channels < 0 or "weight" in op.attrs or "running_mean" in op.attrs:
        return int(op.params["num_features"])
    return channels


@LOWERINGS.register("F.instance_norm")
def instance_norm_function(b, op):
    if op.input("running_mean", 1) is not None and not op.params.get("use_input_stats", True):
        raise Unsupported("use_input_stats=False with running statistics")
    n = b.shape(op.inputs[0])[1]
    scale = _input_or(b, op, "weight", 3, 1.0, n)
    bias = _input_or(b, op, "bias", 4, 0.0, n)
    b.node("InstanceNormalization", [b.x(op), scale, bias], b.y(op),
           epsilon=float(op.params.get("eps", 1e-5)))


@LOWERINGS.register("nn.RMSNorm", "F.rms_norm")
def rms_norm(b, op):
    if b.opset < 23:
        raise Unsupported("RMSNormalization needs opset 23")
    shape = int_list(op.params["normalized_shape"])
    if op.type == "nn.RMSNorm":
        scale = b.attr_weight(op, "weight") if "weight" in op.attrs else None
    else:
        w = op.input("weight", 1)
        scale = w.name if w is not None else None
    if scale is None:
        scale = b.const(np.ones(shape, numpy_type(b.dtype(op.inputs[0]))), b.dtype(op.inputs[0]), "ones")
    eps = op.params.get("eps")
    eps = float(np.finfo(numpy_type(b.dtype(op.inputs[0]))).eps) if eps is None else float(eps)
    b.node("RMSNormalization", [b.x(op), scale], b.y(op), axis=-len(shape), epsilon=eps)


@LOWERINGS.register("nn.LocalResponseNorm", "F.local_response_norm")
def local_response_norm(b, op):
    """(N, C, ...) of any rank >= 3: the window runs over channels only, so onnxruntime's 4-D
    LRN sees the spatial axes folded into one, (N, C, S, 1), and the result takes x's shape."""
    size = int(op.params["size"])
    rank = b.rank(op.inputs[0])
    if rank < 3:
        raise Unsupported(f"input of rank {rank}: torch needs (N, C, ...) with a spatial axis")
    if size % 2 == 0:
        raise Unsupported("even size: torch and ONNX LRN centre the window differently")
    x = b.x(op) if rank == 4 else b.node("Reshape", [b.x(op), b.const([0, 0, -1, 1], hint="shape")])
    y = b.node("LRN", [x], b.y(op) if rank == 4 else 1, size=size,
               alpha=float(op.params.get("alpha", 1e-4)), beta=float(op.params.get("beta", 0.75)),
               bias=float(op.params.get("k", 1.0)))
    if rank != 4:
        b.node("Reshape", [y, b.node("Shape", [b.x(op)])], b.y(op))


@LOWERINGS.register("F.normalize")
def normalize(b, op):
    p = float(op.params.get("p", 2.0))
    reduce = {1.0: "ReduceL1", 2.0: "ReduceL2"}.get(p)
    if reduce is None:
        raise Unsupported(f"p={p}")
    dim = axis(int(op.params.get("dim", 1)), b.rank(op.inputs[0]))
    norm = b.node(reduce, [b.x(op), b.const([dim], hint="axes")], keepdims=1)
    eps = b.const(float(op.params.get("eps", 1e-12)), b.dtype(op.inputs[0]), "eps")
    b.node("Div", [b.x(op), b.node("Max", [norm, eps])], b.y(op))
