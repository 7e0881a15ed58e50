"""Graph rewrites on the working copy before lowering, for patterns that have a single ncnn
layer: view(1,g,c/g,h,w) -> transpose(1,2) -> view(1,c,h,w) is a ShuffleChannel."""
from __future__ import annotations

from ...ir import Graph, Operator

RESHAPES = {"Tensor.view", "Tensor.reshape", "torch.reshape", "torch.flatten", "Tensor.flatten"}


def _sole_consumer(op: Operator) -> Operator | None:
    users = op.outputs[0].consumers if len(op.outputs) == 1 else []
    return users[0] if len(users) == 1 else None


def _swaps_1_2(op: Operator) -> bool:
    if op.type in ("torch.transpose", "Tensor.transpose"):
        return sorted([op.params.get("dim0"), op.params.get("dim1")]) == [1, 2]
    if op.type in ("Tensor.permute", "torch.permute"):
        return list(op.params.get("dims", [])) == [0, 2, 1, 3, 4]
    return False


def _channel_shuffle_groups(first: Operator) -> tuple[int, Operator, Operator] | None:
    if first.type not in RESHAPES:
        return None
    src, mid = first.inputs[0].shape, first.outputs[0].shape
    swap = _sole_consumer(first)
    last = _sole_consumer(swap) if swap is not None and _swaps_1_2(swap) else None
    if last is None or last.type not in RESHAPES or not src or not mid:
        return None
    if len(src) != 4 or len(mid) != 5 or src[0] != 1 or last.outputs[0].shape != src:
        return None
    if mid[1] * mid[2] != src[1] or mid[3:] != src[2:]:
        return None
    return mid[1], swap, last


def fuse_channel_shuffle(graph: Graph) -> None:
    for first in list(graph.ops):
        if first not in graph.ops:
            continue
        found = _channel_shuffle_groups(first)
        if found is None:
            continue
        groups, swap, last = found
        shuffle = graph.new_operator("nn.ChannelShuffle", first.name, before=first)
        shuffle.params["groups"] = int(groups)
        graph.connect(shuffle, [first.inputs[0]])
        graph.replace_uses(last.outputs[0], _output_like(graph, shuffle, last))
        for op in (last, swap, first):
            graph.remove_operator(op)


def _output_like(graph: Graph, op: Operator, last: Operator):
    old = last.outputs[0]
    new = graph.new_operand(old.name + "_shuffled", old.shape, old.dtype)
    graph.connect(op, outputs=[new])
    return new


PREPASSES = (fuse_channel_shuffle,)
