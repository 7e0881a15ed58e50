"""ncnn-level rewrites upstream performs after lowering: activation fused into the preceding
Convolution/InnerProduct (`9=activation_type 10=params`) and a zero-constant Padding folded
into the convolution that reads it."""
from __future__ import annotations

from .context import FLT_MAX
from .layers import Layer

FUSABLE_INTO = {
    "Convolution", "ConvolutionDepthWise", "Convolution1D", "ConvolutionDepthWise1D",
    "Deconvolution", "DeconvolutionDepthWise", "InnerProduct",
}
PAD_FOLDABLE_INTO = {"Convolution", "ConvolutionDepthWise"}


def _activation(layer: Layer):
    """(activation_type, activation_params) for a fusable activation layer, else None."""
    p = layer.params
    if layer.type == "ReLU":
        slope = float(p.get(0, 0.0))
        return (2, [slope]) if slope != 0.0 else (1, None)
    if layer.type == "Clip":
        return 3, [float(p.get(0, -FLT_MAX)), float(p.get(1, FLT_MAX))]
    if layer.type == "Sigmoid":
        return 4, None
    if layer.type == "Mish":
        return 5, None
    return None


def consumers(layers: list[Layer], protected: set[str]) -> dict[str, list[Layer]]:
    """blob -> consuming layers; a protected (graph output) blob gets a None consumer."""
    found: dict[str, list] = {b: [None] for b in protected}
    for layer in layers:
        for blob in layer.inputs:
            found.setdefault(blob, []).append(layer)
    return found


def _sole_consumer(uses: dict, layer: Layer) -> Layer | None:
    if len(layer.outputs) != 1:
        return None
    users = uses.get(layer.outputs[0], [])
    return users[0] if len(users) == 1 else None


def fuse_activations(layers: list[Layer], outputs: set[str]) -> list[Layer]:
    uses = consumers(layers, outputs)
    removed: set[int] = set()
    for layer in layers:
        if layer.type not in FUSABLE_INTO or 9 in layer.params:
            continue
        act = _sole_consumer(uses, layer)
        fused = _activation(act) if act is not None and len(act.inputs) == 1 else None
        if fused is None:
            continue
        layer.params[9] = fused[0]
        if fused[1] is not None:
            layer.params[10] = fused[1]
        layer.outputs = list(act.outputs)
        removed.add(id(act))
    return [layer for layer in layers if id(layer) not in removed]


def fold_padding(layers: list[Layer], outputs: set[str]) -> list[Layer]:
    uses = consumers(layers, outputs)
    removed: set[int] = set()
    for pad in layers:
        if pad.type != "Padding" or pad.params.get(4, 0) != 0 or pad.params.get(7, 0) or pad.params.get(8, 0) \
                or float(pad.params.get(5, 0.0)) != 0.0:
            continue
        conv = _sole_consumer(uses, pad)
        if conv is None or conv.type not in PAD_FOLDABLE_INTO or conv.params.get(4, 0) != 0 \
                or conv.inputs[0] != pad.outputs[0]:
            continue
        if any(conv.params.get(k, 0) for k in (14, 15, 16)):
            continue
        p = pad.params
        conv.params.update({4: p.get(2, 0), 15: p.get(3, 0), 14: p.get(0, 0), 16: p.get(1, 0)})
        conv.inputs = [pad.inputs[0], *conv.inputs[1:]]  # a run-time weight stays its second input
        removed.add(id(pad))
    return [layer for layer in layers if id(layer) not in removed]


def remove_dead(layers: list[Layer], outputs: set[str]) -> list[Layer]:
    """Drop layers none of whose outputs is read (e.g. a Reshape a later view bypassed)."""
    while True:
        used = set(outputs) | {b for layer in layers for b in layer.inputs}
        live = [l for l in layers if l.type == "Input" or any(b in used for b in l.outputs)]
        if len(live) == len(layers):
            return layers
        layers = live
