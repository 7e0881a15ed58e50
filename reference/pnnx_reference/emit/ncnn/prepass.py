"""Graph rewrites on the working copy before lowering: module operators are replaced by their
bodies (see inline); contiguous() dropped; hand-written attention becomes one SDPA layer
(passes.fuse_attention: only here, since torch's SDPA kernel rounds otherwise than the
matmul/softmax/matmul it replaces, so pnnx.param keeps the chain, as upstream does); values that
follow from the input's shape alone folded (shape_values: transformers' traced causal mask); an
attention mask of zeros left out (zero_masks); the
FUSIONS, hand-written arithmetic that has one ncnn layer of the same meaning (RMSNorm, RotaryEmbed),
which `write_ncnn(fuse=False)` leaves as written (to measure what they gain);
patterns that have a single ncnn layer: view(1,g,c/g,h,w) -> transpose(1,2) -> view(1,c,h,w)
is a ShuffleChannel, and so is ShuffleNetV2's view(n*c/g,g,h*w) -> permute(1,0,2) ->
view(g,n,c/g,h,w) -> [j] split (with a channel slice per group); Tensor.unfold as slices, a
stack and a permute (see unfold); then the rank-5/6 reshape -> permute
chains that ncnn's 4-d blobs cannot hold (see highrank)."""
from __future__ import annotations

from ...ir import Graph, Operator
from ...passes import empty_operands, fuse_attention, fuse_rms_norm
from . import fuse_rotary
from .highrank import HIGH_RANK_PREPASSES
from .inline import inline_module_bodies
from .unfold import unfold_as_windows
from .shape_values import fold_shape_values
from .zero_masks import drop_zero_masks

RESHAPES = {"Tensor.view", "Tensor.reshape", "torch.reshape", "torch.flatten", "Tensor.flatten"}
NOOPS = {"Tensor.contiguous"}


def _sole_consumer(op: Operator, skipped: list[Operator] | None = None) -> Operator | None:
    """The only consumer of op's output, looking through no-ops (collected in `skipped`)."""
    users = op.outputs[0].consumers if len(op.outputs) == 1 else []
    if len(users) != 1:
        return None
    if users[0].type in NOOPS and skipped is not None:
        skipped.append(users[0])
        return _sole_consumer(users[0], skipped)
    return users[0]


def _swaps_1_2(op: Operator) -> bool:
    if op.type in ("torch.transpose", "Tensor.transpose"):
        return sorted([op.params.get("dim0"), op.params.get("dim1")]) == [1, 2]
    if op.type in ("Tensor.permute", "torch.permute"):
        return list(op.params.get("dims", [])) == [0, 2, 1, 3, 4]
    return False


def _channel_shuffle_groups(first: Operator) -> tuple[int, list[Operator], Operator] | None:
    if first.type not in RESHAPES:
        return None
    src, mid = first.inputs[0].shape, first.outputs[0].shape
    between: list[Operator] = []
    swap = _sole_consumer(first, between)
    last = _sole_consumer(swap, between) if swap is not None and _swaps_1_2(swap) else None
    if last is None or last.type not in RESHAPES or not src or not mid:
        return None
    if len(src) != 4 or len(mid) != 5 or src[0] != 1 or last.outputs[0].shape != src:
        return None
    if mid[1] * mid[2] != src[1] or mid[3:] != src[2:]:
        return None
    return mid[1], [*between, swap], last


def fuse_channel_shuffle(graph: Graph) -> None:
    for first in list(graph.ops):
        if first not in graph.ops:
            continue
        found = _channel_shuffle_groups(first)
        if found is None:
            continue
        groups, middle, last = found
        shuffle = graph.new_operator("nn.ChannelShuffle", first.name, before=first)
        shuffle.params["groups"] = int(groups)
        graph.connect(shuffle, [first.inputs[0]])
        graph.replace_uses(last.outputs[0], _output_like(graph, shuffle, last))
        for op in sorted([last, *middle], key=graph.ops.index, reverse=True) + [first]:
            graph.remove_operator(op)


def _swaps_0_1(op: Operator) -> bool:
    if op.type in ("torch.transpose", "Tensor.transpose"):
        return sorted([op.params.get("dim0"), op.params.get("dim1")]) == [0, 1]
    return op.type in ("Tensor.permute", "torch.permute") and list(op.params.get("dims", [])) == [1, 0, 2]


def _selected_group(op: Operator) -> int | None:
    """j for `t[j]` (a Tensor.slice selecting one index of dim 0), else None."""
    p = op.params
    if op.type != "Tensor.slice" or len(op.inputs) != 1 or p.get("dims") != [0] or len(p.get("selects", [])) != 1:
        return None
    return p["selects"][0] if p["selects"][0] != 2147483647 else None


def _shuffle_split(first: Operator):
    """ShuffleNetV2's split: x (N,C,H,W) viewed (N*C/g, g, H*W), dims 0 and 1 swapped, viewed
    (g, N, C/g, H, W), then x[j] for each group: group j holds channels j, j+g, j+2g, ... of
    each sample, i.e. a channel shuffle in C/g groups and then the j-th C/g channels."""
    if first.type not in RESHAPES or len(first.outputs) != 1:
        return None
    src, mid = first.inputs[0].shape, first.outputs[0].shape
    between: list[Operator] = []
    swap = _sole_consumer(first, between)
    last = _sole_consumer(swap, between) if swap is not None and _swaps_0_1(swap) else None
    if last is None or last.type not in RESHAPES or not src or not mid or len(src) != 4 or len(mid) != 3:
        return None
    n, c, h, w = src
    g = mid[1]
    if g < 1 or c % g or mid != [n * c // g, g, h * w] or last.outputs[0].shape != [g, n, c // g, h, w]:
        return None
    picks = [(op, _selected_group(op)) for op in last.outputs[0].consumers]
    if not picks or any(j is None or not -g <= j < g for _, j in picks):
        return None
    return c // g, [*between, swap], last, picks


def fuse_shuffle_split(graph: Graph) -> None:
    """The rank-5 view _shuffle_split finds, which ncnn's 4-d blobs cannot hold, as one
    ShuffleChannel and a channel slice per group."""
    for first in list(graph.ops):
        if first not in graph.ops:
            continue
        found = _shuffle_split(first)
        if found is None:
            continue
        groups, middle, last, picks = found
        shuffle = graph.new_operator("nn.ChannelShuffle", first.name, before=first)
        shuffle.params["groups"] = int(groups)
        graph.connect(shuffle, [first.inputs[0]])
        src = first.inputs[0]
        shuffled = graph.new_operand(src.name + "_shuffled", src.shape, src.dtype)
        graph.connect(shuffle, outputs=[shuffled])
        for pick, j in picks:
            j %= last.outputs[0].shape[0]
            pick.params = {"dims": [1], "ends": [(j + 1) * groups], "selects": [2147483647],
                           "starts": [j * groups], "steps": [1]}
        graph.replace_uses(last.outputs[0], shuffled)
        for op in sorted([last, *middle], key=graph.ops.index, reverse=True) + [first]:
            graph.remove_operator(op)


def _output_like(graph: Graph, op: Operator, last: Operator):
    old = last.outputs[0]
    new = graph.new_operand(old.name + "_shuffled", old.shape, old.dtype)
    graph.connect(op, outputs=[new])
    return new


def drop_contiguous(graph: Graph) -> None:
    """Tensor.contiguous computes nothing: its consumers read its input (so the shape rewrites
    below see a view -> permute -> contiguous -> view chain as view -> permute -> view)."""
    for op in [op for op in graph.ops if op.type in NOOPS and len(op.inputs) == 1 and len(op.outputs) == 1]:
        graph.replace_uses(op.outputs[0], op.inputs[0])
        graph.remove_operator(op)


FUSIONS = (fuse_rms_norm.run, fuse_rotary.run)
PREPASSES = (inline_module_bodies, drop_contiguous, empty_operands.drop_from_concatenations, fold_shape_values,
             drop_zero_masks, fuse_attention.run,
             *FUSIONS, fuse_channel_shuffle, fuse_shuffle_split, unfold_as_windows, *HIGH_RANK_PREPASSES)
