"""Blob bookkeeping after lowering: a Split layer wherever a blob has several consumers (a
graph output counts as one) and the output blobs renamed out0, out1, ...

The Split of an input fed as int32 bits (indices several Embeds read) runs on the CPU
(31=featmask, bit 4: no Vulkan): on the GPU with fp16 storage the blob would be uploaded as
fp16, reading its int32 bits as float values."""
from __future__ import annotations

from .layers import Layer


NO_VULKAN = {31: 1 << 4}


def insert_split(layers: list[Layer], output_blobs: list[str],
                 int_bits: set[str] = frozenset()) -> tuple[list[Layer], list[str]]:
    """Returns the new layer list and, per graph output, the blob that now carries it."""
    uses: dict[str, list] = {}
    for layer in layers:
        for i, blob in enumerate(layer.inputs):
            uses.setdefault(blob, []).append((layer, i))
    for k, blob in enumerate(output_blobs):
        uses.setdefault(blob, []).append((None, k))
    result_outputs = list(output_blobs)
    result: list[Layer] = []
    counter = 0
    for layer in layers:
        result.append(layer)
        for blob in layer.outputs:
            users = uses.get(blob, [])
            if len(users) < 2:
                continue
            branches = [f"{blob}_splitncnn_{j}" for j in range(len(users))]
            result.append(Layer("Split", f"splitncnn_{counter}", [blob], branches,
                                dict(NO_VULKAN) if blob in int_bits else {}))
            counter += 1
            for branch, (user, index) in zip(branches, users):
                if user is None:
                    result_outputs[index] = branch
                else:
                    user.inputs[index] = branch
    return result, result_outputs


def rename_outputs(layers: list[Layer], output_blobs: list[str]) -> list[Layer]:
    """Rename each graph output blob to out<i>; an input passed straight through gets a Noop."""
    producers = {blob: layer for layer in layers for blob in layer.outputs}
    for i, blob in enumerate(output_blobs):
        producer = producers[blob]
        new = f"out{i}"
        if producer.type == "Input" or producer.type == "Split" and blob in producer.inputs:
            layers.append(Layer("Noop", f"noop_{i}", [blob], [new]))
            continue
        producer.outputs = [new if b == blob else b for b in producer.outputs]
        for layer in layers:
            layer.inputs = [new if b == blob else b for b in layer.inputs]
    return layers
