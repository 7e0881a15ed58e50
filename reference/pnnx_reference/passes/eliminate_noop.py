"""Drop operators that do nothing at inference: dropout, identity, detach, pads by zero
(swin pads each stage to a multiple of its window: 0 at 224x224), and reshapes/permutes that
leave the tensor as it is. (`contiguous` stays: a later `view` needs it.)"""
from __future__ import annotations

from ..ir import Graph, Operator
from .rewire import bypass, static_shape

_ALWAYS = {"nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout",
           "nn.FeatureAlphaDropout", "nn.Identity", "F.dropout", "F.dropout1d", "F.dropout2d",
           "F.dropout3d", "F.alpha_dropout", "F.feature_alpha_dropout",
           "Tensor.detach", "torch.detach", "Tensor.cpu", "Tensor.cuda"}
_RESHAPES = {"Tensor.view", "Tensor.reshape", "torch.reshape", "Tensor.flatten", "torch.flatten",
             "Tensor.squeeze", "torch.squeeze", "Tensor.unsqueeze", "torch.unsqueeze"}


def _same_shape(op: Operator) -> bool:
    ins, outs = op.inputs, op.outputs
    return (len(ins) == 1 and len(outs) == 1 and static_shape(ins[0]) and static_shape(outs[0])
            and ins[0].shape == outs[0].shape and ins[0].dtype == outs[0].dtype)


def _identity_permute(op: Operator) -> bool:
    dims = op.params.get("dims")
    return op.type in ("Tensor.permute", "torch.permute") and isinstance(dims, list) \
        and len(op.inputs) == 1 and dims == list(range(len(dims)))


def _noop(op: Operator) -> bool:
    if op.type in _ALWAYS:
        return len(op.inputs) >= 1 and len(op.outputs) == 1
    if op.type in _RESHAPES:
        return _same_shape(op)
    if op.type == "F.pad":
        pad = op.params.get("pad")
        return isinstance(pad, list) and not any(pad) and len(op.inputs) == 1 and _same_shape(op)
    if op.type == "Tensor.slice":
        # an empty dims list only: a slice written with the singular dim/start/end slices too
        return "dims" in op.params and not op.params["dims"] and len(op.inputs) == 1
    return _identity_permute(op)


def run(graph: Graph, context=None) -> bool:
    changed = False
    for op in list(graph.ops):
        if _noop(op):
            bypass(graph, op, op.inputs[0])
            changed = True
    return changed
