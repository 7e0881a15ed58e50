"""`inputshape2`: trace twice and mark the dimensions that differ as unknown (-1)."""
from __future__ import annotations

from ..errors import ConversionError
from ..ir import UNKNOWN_DIM
from .trace import Capture


def merge_shapes(first: Capture, second: Capture) -> Capture:
    """`first` with every operand dim that differs in `second` set to -1."""
    a, b = first.graph, second.graph
    if [op.type for op in a.ops] != [op.type for op in b.ops] or len(a.operands) != len(b.operands):
        raise ConversionError("the model runs different operators for inputshape and inputshape2 "
                              "(data-dependent control flow); convert with one input shape")
    for x, y in zip(a.operands, b.operands):
        if x.shape is None or y.shape is None:
            continue
        if len(x.shape) != len(y.shape):
            raise ConversionError(f"operand {x.name} changes rank between inputshape and inputshape2")
        x.shape = [d if d == e else UNKNOWN_DIM for d, e in zip(x.shape, y.shape)]
    return first
