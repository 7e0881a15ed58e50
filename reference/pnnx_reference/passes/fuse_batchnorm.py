"""Fold an inference-mode BatchNorm into the convolution or linear layer that feeds it."""
from __future__ import annotations

import numpy as np
import torch

from ..ir import DTYPES, Attribute, Graph, Operator
from .rewire import bypass, single_consumer

_PAIRS = {"nn.Conv1d": "nn.BatchNorm1d", "nn.Conv2d": "nn.BatchNorm2d", "nn.Conv3d": "nn.BatchNorm3d",
          "nn.Linear": "nn.BatchNorm1d"}


def _fusable(layer: Operator, bn: Operator) -> bool:
    if _PAIRS.get(layer.type) != bn.type or len(bn.inputs) != 1:
        return False
    if "running_mean" not in bn.attrs or "running_var" not in bn.attrs:
        return False
    if layer.type == "nn.Linear":  # BatchNorm1d normalises dim 1: only (N, C) outputs fit
        return layer.outputs[0].shape is not None and len(layer.outputs[0].shape) == 2
    return True


def _double(attr: Attribute) -> torch.Tensor:
    """A float64 copy of a weight, made in one step (no copy in its own dtype first): a large
    layer's temporaries stay in the process's memory after the pass."""
    if attr.dtype in ("bf16", "c32"):  # numpy has no such dtype
        return attr.to_torch().double()
    return torch.from_numpy(attr.to_numpy().astype(np.float64))


def _fold(layer: Operator, bn: Operator) -> None:
    dtype = getattr(torch, DTYPES[layer.attrs["weight"].dtype].numpy)
    weight = _double(layer.attrs["weight"])
    out_channels = weight.shape[0]
    bias = layer.attrs["bias"].to_torch().double() if "bias" in layer.attrs else torch.zeros(out_channels, dtype=torch.double)
    mean = bn.attrs["running_mean"].to_torch().double()
    var = bn.attrs["running_var"].to_torch().double()
    gamma = bn.attrs["weight"].to_torch().double() if "weight" in bn.attrs else torch.ones_like(mean)
    beta = bn.attrs["bias"].to_torch().double() if "bias" in bn.attrs else torch.zeros_like(mean)
    scale = gamma / torch.sqrt(var + float(bn.params.get("eps", 1e-5)))
    fused_w = weight.mul_(scale.reshape([-1] + [1] * (weight.dim() - 1)))  # in place: one copy less
    layer.attrs["weight"] = Attribute.from_torch(fused_w.to(dtype).contiguous())
    layer.attrs["bias"] = Attribute.from_torch(((bias - mean) * scale + beta).to(dtype))
    layer.params["bias"] = True
    layer.attrs = dict(sorted(layer.attrs.items()))


def run(graph: Graph, context=None, only=None) -> bool:
    """`only`: the candidate layers (default: every operator of the graph)."""
    changed = False
    for layer in list(graph.ops if only is None else only):
        if layer.type not in _PAIRS or len(layer.outputs) != 1 or "weight" not in layer.attrs:
            continue
        bn = single_consumer(layer.outputs[0])
        if bn is None or not _fusable(layer, bn):
            continue
        _fold(layer, bn)
        if context is not None:
            context.takes_over(layer.outputs[0], bn.outputs[0])
        bypass(graph, bn, layer.outputs[0])
        changed = True
    return changed
