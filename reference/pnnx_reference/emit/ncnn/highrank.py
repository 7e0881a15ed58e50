"""Rewrites of rank-5/6 reshape -> permute chains into equivalent ones of lower rank, since ncnn
blobs have at most 4 dims (besides the batch). Both are exact (they only move data):

  split_selected_permutes: x.reshape(B).permute(P)[i] (every consumer indexes one axis)
      -> slice x along the indexed block, reshape without that axis, permute the rest;
  merge_permute_runs: input axes that stay adjacent and in order through a permute are merged
      into one axis, e.g. view(1,8,7,8,7,96).permute(0,1,3,2,4,5) -> view(8,7,8,672).permute(0,2,1,3)
      (a window partition); the reshapes around it take the merged shapes;
  sink_scalar_arithmetic: x.view(S) -> arithmetic with scalars -> reshape(T) -> the arithmetic on x,
      then reshape(T) (raft's correlation volume: view(1,H,W,1,H,W) / sqrt(C) -> reshape(HW,1,H,W));
  decompose_permutes: a permute that still moves more than 4 runs of axes becomes the shortest
      chain of permutes of at most 4 runs each (maxvit's view(1,C,8,7,8,7).permute(0,2,4,3,5,1)),
      each on the merged shape, with a reshape between two steps."""
from __future__ import annotations

import functools
import itertools
import math

from ...ir import Graph, Operand, Operator
from .context import MAX_BLOB_RANK

INT_MAX = 2147483647
PERMUTES = {"Tensor.permute", "torch.permute"}
TRANSPOSES = {"Tensor.transpose", "torch.transpose"}
SHAPED_RESHAPES = {"Tensor.view", "Tensor.reshape", "torch.reshape"}  # those with a `shape` param
# consumers that read only the element order, so they take a permute output of any shape
ORDER_ONLY = SHAPED_RESHAPES | {"torch.flatten", "Tensor.flatten"}
MIN_RANK = 5  # the lowest rank of a permute that split_selected_permutes rewrites


def _perm(op: Operator) -> list[int] | None:
    dims = op.params.get("dims")
    shape = op.inputs[0].shape if op.inputs else None
    if op.type not in PERMUTES or not isinstance(dims, (list, tuple)) or not shape:
        return None
    return [int(d) + len(shape) if int(d) < 0 else int(d) for d in dims]


def _static(shape) -> bool:
    return shape is not None and all(isinstance(d, int) and d > 0 for d in shape)


def _reshape(graph: Graph, src: Operand, shape: list[int], name: str, before: Operator) -> Operand:
    return _new_op(graph, "Tensor.reshape", name, src, shape, {"shape": list(shape)}, before)


def _new_op(graph: Graph, type: str, name: str, src: Operand, shape: list[int], params: dict,
            before: Operator) -> Operand:
    op = graph.new_operator(type, name, before=before)
    op.params.update(params)
    out = graph.new_operand(f"{name}_out", shape, src.dtype)
    graph.connect(op, [src], [out])
    return out


# --- split_selected_permutes ------------------------------------------------------------

UNBINDS = {"Tensor.unbind", "torch.unbind"}


def _picks(op: Operator, rank: int) -> list[tuple[Operand, int, int]] | None:
    """(output, axis, index) per output when `op` only takes single indices along one axis of a
    rank-`rank` tensor: x[i], x.select(d, i), x.unbind(d)."""
    if op.type in UNBINDS:
        dim = op.params.get("dim", 0)
        return [(out, dim % rank, i) for i, out in enumerate(op.outputs)] if isinstance(dim, int) else None
    if op.type in ("Tensor.select", "torch.select"):
        dim, index = op.params.get("dim"), op.params.get("index")
    elif op.type == "Tensor.slice" and len(op.params.get("dims") or []) == 1:
        dim, index = op.params["dims"][0], (op.params.get("selects") or [INT_MAX])[0]
    else:
        return None
    if not isinstance(dim, int) or not isinstance(index, int) or index == INT_MAX:
        return None
    return [(op.outputs[0], dim % rank, index)]


def _split_candidate(permute: Operator):
    """(permutation, feeding reshape, picks per consumer) when the permute can be split."""
    perm = _perm(permute)
    src, out = permute.inputs[0], permute.outputs[0]
    reshape = src.producer
    if perm is None or len(perm) < MIN_RANK or reshape is None or reshape.type not in SHAPED_RESHAPES:
        return None
    if not _static(src.shape) or not _static(reshape.inputs[0].shape) or not out.consumers:
        return None
    picks = [_picks(c, len(perm)) for c in out.consumers]
    if any(p is None for p in picks) or len({axis for p in picks for _, axis, _ in p}) != 1:
        return None
    return perm, reshape, picks


def _split_one(graph: Graph, perm, reshape: Operator, consumer: Operator, pick) -> None:
    """Replace one picked output by: slice its block of the reshape's source, view, permute."""
    target, axis, index = pick
    shape = list(reshape.outputs[0].shape)
    k = perm[axis]
    index %= shape[k]
    inner = math.prod(shape[k + 1:])
    flat = shape[:k] + [shape[k] * inner]
    base = f"{target.name}_split"
    src = reshape.inputs[0]
    if list(src.shape) != flat:
        src = _reshape(graph, src, flat, f"{base}_flat", consumer)
    part = _new_op(graph, "Tensor.slice", f"{base}_slice", src, shape[:k] + [inner],
                   {"dims": [k], "starts": [index * inner], "ends": [(index + 1) * inner], "steps": [1],
                    "selects": [INT_MAX]}, consumer)
    part = _reshape(graph, part, shape[:k] + shape[k + 1:], f"{base}_view", consumer)
    rest = [p - (p > k) for p in perm if p != k]
    kept = shape[:k] + shape[k + 1:]
    result = _new_op(graph, "Tensor.permute", f"{base}_permute", part, [kept[p] for p in rest], {"dims": rest},
                     consumer)
    graph.replace_uses(target, result)


def split_selected_permutes(graph: Graph) -> None:
    for permute in [op for op in graph.ops if op.type in PERMUTES]:
        found = _split_candidate(permute)
        if found is None:
            continue
        perm, reshape, picks = found
        for consumer, consumer_picks in zip(list(permute.outputs[0].consumers), picks):
            for pick in consumer_picks:
                _split_one(graph, perm, reshape, consumer, pick)
            graph.remove_operator(consumer)
        graph.remove_operator(permute)
        if not reshape.outputs[0].consumers:
            graph.remove_operator(reshape)


# --- merge_permute_runs -----------------------------------------------------------------

def _runs(perm: list[int]) -> list[list[int]]:
    """Input axes grouped into runs that stay adjacent and in order, in output order."""
    runs: list[list[int]] = []
    for axis in perm:
        if runs and axis == runs[-1][-1] + 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    return runs


def _merged(shape: list[int], perm: list[int]) -> tuple[list[int], list[int], list[int]] | None:
    """(merged input shape, merged permutation, merged output shape), or None if nothing merges."""
    runs = _runs(perm)
    if len(runs) == len(perm):
        return None
    by_input = sorted(runs)
    in_shape = [math.prod(shape[a] for a in run) for run in by_input]
    new_perm = [by_input.index(run) for run in runs]
    return in_shape, new_perm, [in_shape[p] for p in new_perm]


def _too_many_dims(shape: list[int]) -> bool:
    """Whether the tensor has more dims than an ncnn blob (merging is exact, so a rank-5 tensor,
    which could carry one dim as the batch, is merged too)."""
    return len(shape) > MAX_BLOB_RANK


def _mergeable(permute: Operator) -> bool:
    """A too-high-rank permute fed by a reshape of its own and read only by reshapes, so both
    sides can take the merged shapes without new layers."""
    perm, src, out = _perm(permute), permute.inputs[0], permute.outputs[0]
    producer = src.producer
    if perm is None or not _static(src.shape) or not _too_many_dims(list(src.shape)):
        return False
    if producer is None or producer.type not in SHAPED_RESHAPES or len(src.consumers) != 1:
        return False
    return bool(out.consumers) and all(c.type in ORDER_ONLY for c in out.consumers)


def merge_permute_runs(graph: Graph) -> None:
    for permute in [op for op in graph.ops if op.type in PERMUTES]:
        if not _mergeable(permute):
            continue
        src = permute.inputs[0]
        merged = _merged(list(src.shape), _perm(permute))
        if merged is None:
            continue
        in_shape, new_perm, out_shape = merged
        src.producer.params["shape"] = list(in_shape)
        src.shape = list(in_shape)
        permute.params["dims"] = new_perm
        permute.outputs[0].shape = list(out_shape)


# --- transposes_as_permutes --------------------------------------------------------------

def _swap(op: Operator) -> list[int] | None:
    """The permutation a too-high-rank transpose(dim0, dim1) makes, when its shape is known."""
    shape = op.inputs[0].shape if op.inputs else None
    d0, d1 = op.params.get("dim0"), op.params.get("dim1")
    if not _static(shape) or not _too_many_dims(list(shape)) or not isinstance(d0, int) or not isinstance(d1, int):
        return None
    perm = list(range(len(shape)))
    perm[d0 % len(shape)], perm[d1 % len(shape)] = perm[d1 % len(shape)], perm[d0 % len(shape)]
    return perm


def transposes_as_permutes(graph: Graph) -> None:
    """x.transpose(2, 3) of a rank-6 tensor is x.permute(0, 1, 3, 2, 4, 5): written so, the
    rewrites below see it (torch.onnx writes a window partition's permute as a Transpose that
    swaps two axes, and the ONNX frontend reads that back as a transpose)."""
    for op in [op for op in graph.ops if op.type in TRANSPOSES]:
        perm = _swap(op)
        if perm is not None:
            op.type, op.params = "Tensor.permute", {"dims": perm}


# --- sink_scalar_arithmetic --------------------------------------------------------------

def _scalar_arithmetic(op: Operator, x: Operand) -> bool:
    """An expression of `x` (read once) and constants of one element each, shaped like `x`:
    it computes the same elements whatever shape `x` is viewed in."""
    if op.type != "pnnx.Expression" or len(op.outputs) != 1 or op.inputs.count(x) != 1:
        return False
    others = [i for i in op.inputs if i is not x]
    return op.outputs[0].shape == x.shape and all(
        i.producer is not None and i.producer.type == "pnnx.Attribute" and i.shape is not None
        and math.prod(i.shape) == 1 and len(i.shape) <= len(x.shape) for i in others)


def sink_scalar_arithmetic(graph: Graph) -> None:
    for view in [op for op in graph.ops if op.type in SHAPED_RESHAPES and len(op.inputs) == 1]:
        out = view.outputs[0]
        if not _static(out.shape) or not _too_many_dims(list(out.shape)) or len(out.consumers) != 1:
            continue
        arithmetic = out.consumers[0]
        if not _scalar_arithmetic(arithmetic, out):
            continue
        result = arithmetic.outputs[0]
        if not result.consumers or not all(c.type in SHAPED_RESHAPES and len(c.inputs) == 1 for c in result.consumers):
            continue
        src = view.inputs[0]
        arithmetic.inputs = [src if i is out else i for i in arithmetic.inputs]
        out.consumers.clear()
        src.consumers.append(arithmetic)
        result.shape = list(src.shape)
        graph.remove_operator(view)


# --- decompose_permutes ------------------------------------------------------------------

MAX_DECOMPOSED_RANK = 7  # the search below visits rank! arrangements


def _block_moves(rank: int) -> list[tuple[int, ...]]:
    """Every permutation of `rank` axes that cuts them into at most 4 blocks of adjacent axes and
    reorders the blocks (the identity left out): each is a permute of an at most 4-d tensor."""
    moves = []
    for k in range(2, MAX_BLOB_RANK + 1):
        for cuts in itertools.combinations(range(1, rank), k - 1):
            bounds = (0, *cuts, rank)
            blocks = [tuple(range(bounds[i], bounds[i + 1])) for i in range(k)]
            for order in itertools.permutations(range(k)):
                if list(order) != sorted(order):
                    moves.append(tuple(a for b in order for a in blocks[b]))
    return moves


@functools.lru_cache(maxsize=None)
def _steps(perm: tuple[int, ...]) -> tuple[tuple[int, ...], ...] | None:
    """The fewest block moves whose composition is `perm` (breadth-first over arrangements)."""
    start = tuple(range(len(perm)))
    moves, previous = _block_moves(len(perm)), {start: None}
    frontier = [start]
    while frontier and perm not in previous:
        following = []
        for state in frontier:
            for move in moves:
                nxt = tuple(state[i] for i in move)
                if nxt not in previous:
                    previous[nxt] = (state, move)
                    following.append(nxt)
        frontier = following
    if perm not in previous:
        return None
    steps, state = [], perm
    while previous[state] is not None:
        state, move = previous[state]
        steps.append(move)
    return tuple(reversed(steps))


def _needs_steps(perm: list[int]) -> bool:
    """More runs than a blob holds, counting a leading run that stays first as the batch."""
    runs = _runs(perm)
    return len(runs) - (runs[0][0] == 0) > MAX_BLOB_RANK and len(perm) <= MAX_DECOMPOSED_RANK


def decompose_permutes(graph: Graph) -> None:
    for permute in [op for op in graph.ops if op.type in PERMUTES]:
        perm, src, out = _perm(permute), permute.inputs[0], permute.outputs[0]
        if perm is None or not _static(src.shape) or not _needs_steps(perm):
            continue
        producer = src.producer
        if producer is None or producer.type not in SHAPED_RESHAPES or len(producer.inputs) != 1 \
                or len(src.consumers) != 1 or not out.consumers or not all(c.type in ORDER_ONLY for c in out.consumers):
            continue
        steps = _steps(tuple(perm))
        if steps is None:
            continue
        _chain(graph, permute, producer, steps)


def _chain(graph: Graph, permute: Operator, producer: Operator, steps) -> None:
    """`permute` as the permutes `steps`, each on its merged shape: the producing reshape gives the
    first one's input shape, a reshape leads into each next one, `permute` itself is the last."""
    src, out = permute.inputs[0], permute.outputs[0]
    shape, current = list(src.shape), src
    for k, move in enumerate(steps):
        in_shape, dims, out_shape = _merged(shape, list(move)) or (shape, list(move), [shape[i] for i in move])
        if k == 0:
            producer.params["shape"] = list(in_shape)
            src.shape = list(in_shape)
        else:
            current = _reshape(graph, current, in_shape, f"{permute.name}_step{k}_view", permute)
        if k < len(steps) - 1:
            current = _new_op(graph, "Tensor.permute", f"{permute.name}_step{k}", current, out_shape,
                              {"dims": dims}, permute)
        else:
            if current is not src:
                src.consumers.remove(permute)
                permute.inputs = [current]
                current.consumers.append(permute)
            permute.params["dims"] = dims
            out.shape = list(out_shape)
        shape = [shape[i] for i in move]


HIGH_RANK_PREPASSES = (transposes_as_permutes, sink_scalar_arithmetic, split_selected_permutes, merge_permute_runs,
                       decompose_permutes)
