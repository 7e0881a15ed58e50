"""Zero-size operands. torch.cat leaves an empty operand out (and accepts a 1-d empty one
beside operands of any rank, a legacy rule): transformers' key/value caches start as such an
empty past, `torch.zeros(0)` or (batch, heads, 0, dim). ncnn has no empty blob (a
`MemoryData 0=0`, which ncnn reads as one element, concatenated onto keys corrupts its heap)
and ONNX's Concat takes operands of one rank, so the emitters concatenate the non-empty
operands only (`drop_from_concatenations` on the ncnn emitter's working copy, `concatenated`
in the ONNX lowering); pnnx.param and `_pnnx.py` keep the cat as traced, torch runs it."""
from __future__ import annotations

from ..ir import Graph, Operand, Operator
from .rewire import bypass, set_inputs

CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate"})


def is_empty(operand: Operand) -> bool:
    return operand.shape is not None and 0 in operand.shape


def concatenated(op: Operator) -> list[Operand]:
    """The operands that contribute to concatenation `op`: all of them when all are empty."""
    kept = [x for x in op.inputs if not is_empty(x)]
    return kept or list(op.inputs)


def drop_from_concatenations(graph: Graph) -> None:
    """Every concatenation reads its non-empty operands only; one of a single such operand is
    that operand. A constant left unread goes too (no zero-size weight is written)."""
    for op in [op for op in graph.ops if op.type in CONCATENATIONS]:
        kept = concatenated(op)
        if len(kept) == len(op.inputs):
            continue
        dropped = [x for x in op.inputs if x not in kept]
        if len(kept) == 1 and not is_empty(op.outputs[0]):
            bypass(graph, op, kept[0])
        else:
            set_inputs(graph, op, kept)
        for operand in dropped:
            if operand.producer is not None and operand.producer.type == "pnnx.Attribute" \
                    and not operand.consumers:
                graph.remove_operator(operand.producer)
