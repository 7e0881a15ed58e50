"""BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RMSNorm, LocalResponseNorm, F.normalize
(weights untagged: ncnn reads them raw fp32). The norms read the layout from the torch shape:
a batch held in the blob (not as the ncnn Mat batch) runs as N*C instances (per-channel
parameters tiled N times) on a reshaped view."""
from __future__ import annotations

import math

import numpy as np

from ....errors import AlongBatch, Unsupported
from ..arithmetic import binary, power, root, scalar, unary
from ..context import Context, dims_params, param, permutation_order_type
from ..layers import Weight
from ..reduction import REDUCE_L1, REDUCE_L2, REDUCE_SUM, reduction
from ..registry import ANY, FIRST, LEADING, LOWERINGS


def _array(ctx: Context, op, name: str, position: int):
    """A module attr, or a constant F.* input (by keyword, else by position); None if absent."""
    if name in op.attrs:
        return op.attrs[name].to_numpy().astype(np.float32, copy=False).reshape(-1)
    if op.type.startswith("nn."):
        return None
    value = ctx.constant_input(op, name, position)
    return None if value is None else value.reshape(-1)


def _emit(ctx, op, layer_type, prefix, params, arrays, view=None) -> None:
    """The norm layer on the input blob, or on the input reshaped to `view` (then reshaped back)
    where the ncnn layer needs another layout."""
    weights = [Weight(a, tagged=False) for a in arrays]
    src, out = ctx.blob(op.inputs[0]), op.outputs[0].name
    if view is None or view == ctx.shape(op.inputs[0]):
        ctx.emit(layer_type, prefix, [src], [out], params, weights)
        return
    if any(d < 0 for d in view):
        raise Unsupported("dynamic shapes are not reshaped around the norm layer")
    flat, normed = ctx.temp(out), ctx.temp(out)
    ctx.emit("Reshape", "reshape", [src], [flat], dims_params(view))
    ctx.emit(layer_type, prefix, [flat], [normed], params, weights)
    ctx.emit("Reshape", "reshape", [normed], [out], dims_params(ctx.shape(op.outputs[0])))


def _instances(ctx: Context, op, lead: int) -> tuple[int, int, int]:
    """(channels, instances, size) of an input whose first `lead` dims are (N, C) or (C): each
    of the N*C instances is normalised (or scaled) over its `size` trailing elements on its own."""
    shape = ctx.torch_shape(op.inputs[0])
    if lead not in (1, 2) or lead > len(shape):
        raise Unsupported(f"expects an (N, C, ...) or (C, ...) input, got {tuple(shape)}")
    if lead == 2 and ctx.has_batch(op.inputs[0]):
        shape[0] = 1  # the batch ncnn drops (1, or dynamic and run as 1)
    size = math.prod(shape[lead:]) if all(d > 0 for d in shape[lead:]) else -1  # -1: dynamic
    return shape[lead - 1], math.prod(shape[:lead]), size


def _tiled(array, repeat: int):
    """Per-channel parameters repeated for each sample of a batch laid out as N*C instances."""
    return None if array is None else np.tile(array, repeat)


@LOWERINGS.register("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.SyncBatchNorm", "F.batch_norm",
                    batch=LEADING, dynamic_batch=True)
def batch_norm(ctx: Context, op) -> None:
    mean = _array(ctx, op, "running_mean", 1)
    var = _array(ctx, op, "running_var", 2)
    gamma, beta = _array(ctx, op, "weight", 3), _array(ctx, op, "bias", 4)
    if mean is None or var is None or param(op, "training", False):
        _batch_statistics(ctx, op, gamma, beta)
        return
    lead = 2 if len(ctx.torch_shape(op.inputs[0])) > 1 else 1  # (N, C, ...); a (C,) input is unbatched
    _emit_batchnorm(ctx, op, lead, mean, var, gamma, beta)


def _batch_statistics(ctx: Context, op, gamma, beta) -> None:
    """Without running statistics (track_running_stats=False, or training=True) each channel is
    normalised over the batch and spatial dims: an InstanceNorm with the batch inside each channel
    (so the batch must be a blob dim, not the ncnn Mat batch)."""
    x = op.inputs[0]
    if ctx.has_batch(x) and x.shape[ctx.batch_axis(x)] != 1:
        raise AlongBatch("batch statistics are taken across the batch")
    channels = _instances_of_batch(ctx, op)[1]
    gamma = np.ones(channels, np.float32) if gamma is None else gamma
    beta = np.zeros(channels, np.float32) if beta is None else beta
    _across_channels(ctx, op, "InstanceNorm", "in", {0: channels, 1: float(param(op, "eps", 1e-5)), 2: 1},
                     [gamma, beta])


def _across_channels(ctx: Context, op, layer_type, prefix, params, arrays) -> None:
    """A layer working on dim 0 of a (c, h, w) blob, each channel's (h, w) as one set of positions
    (InstanceNorm per channel, LRN across channels), over an (N, C, ...) input: the blob as it is
    when it is (C, h, w), a (C, 1, size) view for batch 1, else a (C, N, size) view with the batch
    permuted inside each channel, permuted back after."""
    batch, channels, size = _instances_of_batch(ctx, op)
    shape = ctx.shape(op.inputs[0])
    if batch == 1:
        direct = len(shape) == 3 and shape[0] == channels
        _emit(ctx, op, layer_type, prefix, params, arrays, None if direct else [channels, 1, size])
        return
    if size < 1:
        raise Unsupported("dynamic shapes are not permuted around the norm layer")
    out = op.outputs[0].name
    blobs = [ctx.temp(out) for _ in range(4)]
    swap = {0: permutation_order_type([1, 0, 2])}
    ctx.emit("Reshape", "reshape", [ctx.blob(op.inputs[0])], [blobs[0]], dims_params([batch, channels, size]))
    ctx.emit("Permute", "permute", [blobs[0]], [blobs[1]], swap)
    ctx.emit(layer_type, prefix, [blobs[1]], [blobs[2]], params, [Weight(a, tagged=False) for a in arrays])
    ctx.emit("Permute", "permute", [blobs[2]], [blobs[3]], swap)
    ctx.emit("Reshape", "reshape", [blobs[3]], [out], dims_params(ctx.shape(op.outputs[0])))


def _instances_of_batch(ctx: Context, op) -> tuple[int, int, int]:
    """(N, C, size) of an (N, C, ...) input, N being 1 where ncnn dropped the batch."""
    channels, instances, size = _instances(ctx, op, 2)
    return instances // channels, channels, size


def _emit_batchnorm(ctx, op, lead, mean, var, gamma, beta) -> None:
    """ncnn BatchNorm scales dim 0 of a 2/3/4-d blob (each element of a 1-d one); an input laid
    out otherwise (a batch kept, a (N, C) matrix) runs as an (N*C, size) view, statistics tiled."""
    channels, instances, size = _instances(ctx, op, lead)
    shape = ctx.shape(op.inputs[0])
    gamma = np.ones(channels, np.float32) if gamma is None else gamma
    beta = np.zeros(channels, np.float32) if beta is None else beta
    direct = shape[0] == instances and (len(shape) > 1 or size == 1)
    repeat = instances // channels
    arrays = [_tiled(a, repeat) for a in (gamma, mean, var, beta)]
    eps = float(param(op, "eps", 1e-5))
    _emit(ctx, op, "BatchNorm", "bn", {0: int(instances), 1: eps}, arrays,
          None if direct else [instances, size])


def _trailing_view(ctx: Context, op, normalized: list[int]) -> list[int] | None:
    """None where ncnn LayerNorm/RMSNorm normalise the trailing `normalized` dims of the blob as
    it is (the last dim of a 1/2/3-d blob, the last two of a 3-d one); otherwise the (rows, size)
    view they normalise row by row."""
    shape = ctx.shape(op.inputs[0])
    n = len(normalized)
    for d in range(1, min(n, len(ctx.torch_shape(op.inputs[0]))) + 1):
        ctx.axis(op.inputs[0], -d)  # the normalized dims cannot hold the batch
    if list(ctx.torch_shape(op.inputs[0])[-n:]) != normalized:
        raise Unsupported(f"normalized_shape={normalized} is not the trailing shape of the input")
    if len(shape) <= 3 and (n == 1 or (n == 2 and len(shape) == 3)):
        return None
    rows = math.prod(shape[:-n]) if n < len(shape) else 1
    return [math.prod(normalized)] if rows == 1 else [rows, math.prod(normalized)]


def _normalized(op) -> list[int]:
    normalized = param(op, "normalized_shape")
    return [normalized] if isinstance(normalized, int) else [int(d) for d in normalized]


@LOWERINGS.register("nn.LayerNorm", "F.layer_norm", batch=ANY)
def layer_norm(ctx: Context, op) -> None:
    normalized = _normalized(op)
    view = _trailing_view(ctx, op, normalized)
    gamma, beta = _array(ctx, op, "weight", 2), _array(ctx, op, "bias", 3)
    affine = gamma is not None
    size = int(math.prod(normalized))
    arrays = [gamma, beta if beta is not None else np.zeros(size, np.float32)] if affine else []
    _emit(ctx, op, "LayerNorm", "ln", {0: size, 1: float(param(op, "eps", 1e-5)), 2: int(affine)}, arrays, view)


@LOWERINGS.register("nn.GroupNorm", "F.group_norm", batch=LEADING, dynamic_batch=True)
def group_norm(ctx: Context, op) -> None:
    """ncnn GroupNorm groups dim 0 of the blob; a kept batch runs as N*groups groups over an
    (N*C, 1, size) view, the affine parameters tiled."""
    groups = int(param(op, "num_groups"))
    channels, instances, size = _instances(ctx, op, 2)
    repeat = instances // channels
    gamma, beta = _array(ctx, op, "weight", 1), _array(ctx, op, "bias", 2)
    affine = gamma is not None
    arrays = [gamma, beta if beta is not None else np.zeros(channels, np.float32)] if affine else []
    direct = ctx.shape(op.inputs[0])[0] == instances
    _emit(ctx, op, "GroupNorm", "gn",
          {0: groups * repeat, 1: int(instances), 2: float(param(op, "eps", 1e-5)), 3: int(affine)},
          [_tiled(a, repeat) for a in arrays], None if direct else [instances, 1, size])


SPATIAL_DIMS = {"nn.InstanceNorm1d": 1, "nn.InstanceNorm2d": 2, "nn.InstanceNorm3d": 3}


@LOWERINGS.register("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d", "F.instance_norm",
                    batch=LEADING, dynamic_batch=True)
def instance_norm(ctx: Context, op) -> None:
    """ncnn InstanceNorm normalises each channel of a (c, h, w) blob: any other layout (1-d or
    3-d spatial, a kept batch) runs as an (N*C, 1, size) view, the affine parameters tiled."""
    rank = len(ctx.torch_shape(op.inputs[0]))
    lead = rank - SPATIAL_DIMS[op.type] if op.type in SPATIAL_DIMS else 2  # F.instance_norm: (N, C, ...)
    mean, var = _array(ctx, op, "running_mean", 1), _array(ctx, op, "running_var", 2)
    gamma, beta = _array(ctx, op, "weight", 3), _array(ctx, op, "bias", 4)
    if mean is not None and var is not None and not param(op, "use_input_stats", False):
        _emit_batchnorm(ctx, op, lead, mean, var, gamma, beta)  # tracked stats: eval is a batch norm
        return
    channels, instances, size = _instances(ctx, op, lead)
    repeat = instances // channels
    shape = ctx.shape(op.inputs[0])
    affine = gamma is not None
    arrays = [gamma, beta if beta is not None else np.zeros(channels, np.float32)] if affine else []
    direct = len(shape) == 3 and shape[0] == instances
    _emit(ctx, op, "InstanceNorm", "in", {0: int(instances), 1: float(param(op, "eps", 1e-5)), 2: int(affine)},
          [_tiled(a, repeat) for a in arrays], None if direct else [instances, 1, size])


@LOWERINGS.register("nn.RMSNorm", "F.rms_norm", batch=ANY)
def rms_norm(ctx: Context, op) -> None:
    normalized = _normalized(op)
    view = _trailing_view(ctx, op, normalized)
    eps = param(op, "eps")
    if eps is None:  # torch then uses the dtype's machine epsilon
        eps = float(np.finfo(np.float32).eps)
    gamma = _array(ctx, op, "weight", 2)
    arrays = [gamma] if gamma is not None else []
    _emit(ctx, op, "RMSNorm", "rmsnorm", {0: int(math.prod(normalized)), 1: float(eps), 2: int(gamma is not None)},
          arrays, view)


@LOWERINGS.register("nn.LocalResponseNorm", "F.local_response_norm", batch=LEADING, dynamic_batch=True)
def local_response_norm(ctx: Context, op) -> None:
    # ncnn's LRN window spans size // 2 channels before and size - size // 2 - 1 after, as torch's
    # does, so an even size lowers too
    size = int(param(op, "size"))
    _across_channels(ctx, op, "LRN", "lrn", {0: 0, 1: size, 2: float(param(op, "alpha", 1e-4)),
                                             3: float(param(op, "beta", 0.75)), 4: float(param(op, "k", 1.0))}, [])


@LOWERINGS.register("F.normalize", batch=FIRST, unbatched_rank=3)
def normalize(ctx: Context, op) -> None:
    """x / max(||x||_p, eps) along dim: over the channels of a (c, h, w) sample with p=2, ncnn
    Normalize (eps_mode=1 is torch's x / max(||x||, eps); the scale weight a single untagged 1);
    otherwise the norm as a Reduction kept along that axis (L1, L2, or sum(|x|^p)^(1/p)), max
    with eps, and a broadcasting BinaryOp div."""
    p, eps = float(param(op, "p", 2.0)), float(param(op, "eps", 1e-12))
    x, out = op.inputs[0], op.outputs[0].name
    axis = ctx.axis(x, int(param(op, "dim", 1)))
    if p == 2.0 and ctx.rank(x) == 3 and axis == 0:
        _emit(ctx, op, "Normalize", "normalize", {0: 0, 1: 1, 2: eps, 3: 1, 4: 1, 9: 1}, [np.ones(1, np.float32)])
        return
    if not p > 0 or math.isinf(p):
        raise Unsupported(f"normalize with p={p} is not lowered (p > 0, finite)")
    src, rank = ctx.blob(x), ctx.rank(x)
    if p in (1.0, 2.0):
        norm = reduction(ctx, REDUCE_L1 if p == 1.0 else REDUCE_L2, src, [axis], rank, True, ctx.temp(out))
    else:
        magnitude = unary(ctx, "abs", src, ctx.temp(out))
        total = reduction(ctx, REDUCE_SUM, power(ctx, magnitude, p, out), [axis], rank, True, ctx.temp(out))
        norm = root(ctx, total, p, ctx.temp(out))
    binary(ctx, "div", src, scalar(ctx, "max", norm, eps, ctx.temp(out)), out)
