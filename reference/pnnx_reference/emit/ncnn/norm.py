"""BatchNorm, LayerNorm, GroupNorm, InstanceNorm (weights untagged: ncnn reads them raw fp32)."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, param
from .layers import Weight
from .registry import lowers


def _array(ctx: Context, op, name: str, position: int):
    """A module attr, or a constant F.* input (by keyword, else by position); None if absent."""
    if name in op.attrs:
        return op.attrs[name].to_numpy().astype(np.float32).reshape(-1)
    if op.type.startswith("nn."):
        return None
    names = op.inputnames or []
    idx = names.index(name) if name in names else position
    if idx >= len(op.inputs) or (names and name not in names):
        return None
    value = ctx.constant(op.inputs[idx])
    if value is None:
        raise CannotLower(f"{name} is not a constant")
    return value.astype(np.float32).reshape(-1)


def _emit(ctx, op, layer_type, prefix, params, arrays) -> None:
    weights = [Weight(a, tagged=False) for a in arrays]
    ctx.emit(layer_type, prefix, [ctx.blob(op.inputs[0])], [op.outputs[0].name], params, weights)


@lowers("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "nn.SyncBatchNorm", "F.batch_norm")
def batch_norm(ctx: Context, op) -> None:
    mean = _array(ctx, op, "running_mean", 1)
    var = _array(ctx, op, "running_var", 2)
    if mean is None or var is None:
        raise CannotLower("batch norm without running statistics")
    _emit_batchnorm(ctx, op, mean, var, _array(ctx, op, "weight", 3), _array(ctx, op, "bias", 4))


def _emit_batchnorm(ctx, op, mean, var, gamma, beta) -> None:
    n = mean.size
    gamma = np.ones(n, np.float32) if gamma is None else gamma
    beta = np.zeros(n, np.float32) if beta is None else beta
    if ctx.rank(op.inputs[0]) < 1:
        raise CannotLower("batch norm on a 0-d blob")
    eps = float(param(op, "eps", 1e-5))
    _emit(ctx, op, "BatchNorm", "bn", {0: int(n), 1: eps}, [gamma, mean, var, beta])


@lowers("nn.LayerNorm", "F.layer_norm")
def layer_norm(ctx: Context, op) -> None:
    normalized = param(op, "normalized_shape")
    normalized = [normalized] if isinstance(normalized, int) else list(normalized)
    rank = ctx.rank(op.inputs[0])
    if len(normalized) > 2 or rank > 3 or len(normalized) > rank or (len(normalized) == 2 and rank == 2):
        raise CannotLower(f"ncnn LayerNorm normalizes the last dim (or the last two of a 3-d blob); "
                          f"got normalized_shape={normalized} on a rank-{rank} blob")
    gamma, beta = _array(ctx, op, "weight", 2), _array(ctx, op, "bias", 3)
    affine = gamma is not None
    size = int(math.prod(normalized))
    arrays = [gamma, beta if beta is not None else np.zeros(size, np.float32)] if affine else []
    _emit(ctx, op, "LayerNorm", "ln", {0: size, 1: float(param(op, "eps", 1e-5)), 2: int(affine)}, arrays)


@lowers("nn.GroupNorm", "F.group_norm")
def group_norm(ctx: Context, op) -> None:
    groups = int(param(op, "num_groups"))
    channels = ctx.shape(op.inputs[0])[0]
    gamma, beta = _array(ctx, op, "weight", 1), _array(ctx, op, "bias", 2)
    affine = gamma is not None
    arrays = [gamma, beta if beta is not None else np.zeros(channels, np.float32)] if affine else []
    _emit(ctx, op, "GroupNorm", "gn",
          {0: groups, 1: int(channels), 2: float(param(op, "eps", 1e-5)), 3: int(affine)}, arrays)


@lowers("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d", "F.instance_norm")
def instance_norm(ctx: Context, op) -> None:
    mean, var = _array(ctx, op, "running_mean", 1), _array(ctx, op, "running_var", 2)
    gamma, beta = _array(ctx, op, "weight", 3), _array(ctx, op, "bias", 4)
    if mean is not None and var is not None and not param(op, "use_input_stats", False):
        _emit_batchnorm(ctx, op, mean, var, gamma, beta)  # tracked stats: eval is a batch norm
        return
    if ctx.rank(op.inputs[0]) != 3:
        raise CannotLower("ncnn InstanceNorm takes (c,h,w) blobs: only InstanceNorm2d input lowers")
    channels = ctx.shape(op.inputs[0])[0]
    affine = gamma is not None
    arrays = [gamma, beta if beta is not None else np.zeros(channels, np.float32)] if affine else []
    _emit(ctx, op, "InstanceNorm", "in",
          {0: int(channels), 1: float(param(op, "eps", 1e-5)), 2: int(affine)}, arrays)


@lowers("nn.RMSNorm", "F.rms_norm")
def rms_norm(ctx: Context, op) -> None:
    normalized = param(op, "normalized_shape")
    normalized = [normalized] if isinstance(normalized, int) else list(normalized)
    rank = ctx.rank(op.inputs[0])
    if len(normalized) > 2 or rank > 3 or len(normalized) > rank or (len(normalized) == 2 and rank == 2):
        raise CannotLower(f"ncnn RMSNorm normalizes the last dim (or the last two of a 3-d blob); "
                          f"got normalized_shape={normalized} on a rank-{rank} blob")
    eps = param(op, "eps")
    if eps is None:  # torch then uses the dtype's machine epsilon
        eps = float(np.finfo(np.float32).eps)
    gamma = _array(ctx, op, "weight", 2)
    arrays = [gamma] if gamma is not None else []
    _emit(ctx, op, "RMSNorm", "rmsnorm", {0: int(math.prod(normalized)), 1: float(eps), 2: int(gamma is not None)},
          arrays)


@lowers("nn.LocalResponseNorm", "F.local_response_norm")
def local_response_norm(ctx: Context, op) -> None:
    size = int(param(op, "size"))
    if size % 2 == 0:
        raise CannotLower("an even LRN size pads asymmetrically in torch; ncnn pads both sides equally")
    if ctx.rank(op.inputs[0]) != 3:
        raise CannotLower("ncnn LRN takes (c,h,w) blobs")
    _emit(ctx, op, "LRN", "lrn", {0: 0, 1: size, 2: float(param(op, "alpha", 1e-4)),
                                   3: float(param(op, "beta", 0.75)), 4: float(param(op, "k", 1.0))}, [])


@lowers("F.normalize")
def normalize(ctx: Context, op) -> None:
    """L2 normalisation over the channels of a (1,c,h,w) tensor (ncnn Normalize, eps_mode=1 is
    torch's x / max(||x||, eps)); the scale weight is a single untagged 1."""
    if float(param(op, "p", 2.0)) != 2.0:
        raise CannotLower("only p=2 normalisation has an ncnn Normalize equivalent")
    if ctx.rank(op.inputs[0]) != 3 or ctx.axis(op.inputs[0], int(param(op, "dim", 1))) != 0:
        raise CannotLower("ncnn Normalize lowers F.normalize over dim 1 of a (1,c,h,w) tensor only")
    _emit(ctx, op, "Normalize", "normalize",
          {0: 0, 1: 1, 2: float(param(op, "eps", 1e-12)), 3: 1, 4: 1, 9: 1}, [np.ones(1, np.float32)])
