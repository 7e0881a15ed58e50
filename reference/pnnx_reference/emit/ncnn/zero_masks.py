"""An attention mask of zeros is no mask: SDPA adds attn_mask to the scores, and adding 0
changes none of them. transformers' T5 passes its cross-attention (which has no relative
position bias) torch.zeros(1, heads, L, S) as the bias: over lengths that follow the input
that is a fill of a shape read at run time, which ncnn has no layer for, so on the ncnn
emitter's working copy the mask is left out (and its producers, once unread)."""
from __future__ import annotations

from ...ir import Graph, Operand, Operator
from ...passes.rewire import set_inputs

ZERO_FILLS = frozenset({"torch.zeros", "torch.zeros_like", "Tensor.new_zeros"})
VALUE_FILLS = frozenset({"torch.full", "torch.full_like", "Tensor.new_full"})
FLOATS = ("f16", "f32", "f64", "bf16")


def _all_zeros(operand: Operand) -> bool:
    """Whether a float operand is a fill of zeros (a bool one of zeros would mask every score)."""
    op = operand.producer
    if op is None or operand.dtype not in FLOATS:
        return False
    return op.type in ZERO_FILLS or (op.type in VALUE_FILLS and op.params.get("fill_value") == 0)


def _same_shape_without(op: Operator, mask: Operand) -> bool:
    """Whether the result keeps its shape without the mask: it broadcasts to no more than the
    query's leading dims (the result is (..., L, Ev) of query and value alone)."""
    q, v, out = op.inputs[0], op.inputs[2], op.outputs[0]
    if None in (q.shape, v.shape, out.shape, mask.shape):
        return False
    return list(out.shape) == list(q.shape[:-1]) + [v.shape[-1]] and len(mask.shape) <= len(q.shape)


def drop_unread(graph: Graph, op: Operator | None) -> None:
    """`op` once nothing reads its results, then so each producer of its inputs (the size list
    of a torch.zeros: a pnnx.Expression no ncnn layer would take unread)."""
    if op is None or op.type == "pnnx.Input" or op not in graph.ops or any(out.consumers for out in op.outputs):
        return
    producers = [x.producer for x in op.inputs]
    graph.remove_operator(op)
    for producer in producers:
        drop_unread(graph, producer)


def attention_masks(graph: Graph) -> list[tuple[Operator, Operand]]:
    """(SDPA operator, its attn_mask operand) for each SDPA that reads a mask."""
    found = []
    for op in [op for op in graph.ops if op.type == "F.scaled_dot_product_attention"]:
        names = op.inputnames if len(op.inputnames) == len(op.inputs) else []
        if "attn_mask" in names:
            found.append((op, op.inputs[names.index("attn_mask")]))
    return found


def drop_mask(graph: Graph, op: Operator, mask: Operand) -> bool:
    """Leave `mask` out of the SDPA `op` where the result keeps its shape without it."""
    if not _same_shape_without(op, mask):
        return False
    kept = [(x, n) for x, n in zip(op.inputs, op.inputnames) if n != "attn_mask"]
    set_inputs(graph, op, [x for x, _ in kept], [n for _, n in kept])
    drop_unread(graph, mask.producer)
    return True


def drop_zero_masks(graph: Graph) -> None:
    for op, mask in attention_masks(graph):
        if _all_zeros(mask):
            drop_mask(graph, op, mask)
