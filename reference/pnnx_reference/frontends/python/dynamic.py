"""`inputshape2`: trace twice and mark the dimensions that differ as unknown (-1)."""
from __future__ import annotations

from ...errors import ConversionError
from ...ir import UNKNOWN_DIM
from .trace import Capture


def merge_shapes(first: Capture, second: Capture) -> Capture:
    """`first` with every operand dim that differs in `second` set to -1."""
    a, b = first.graph, second.graph
    if [op.type for op in a.ops] != [op.type for op in b.ops] or len(a.operands) != len(b.operands):
        raise ConversionError("the model runs different operators for inputshape and inputshape2 "
                              "(data-dependent control flow); convert with one input shape")
    for op, other in zip(a.ops, b.ops):
        _check_same_constants(op, other)
    for x, y in zip(a.operands, b.operands):
        if x.shape is None or y.shape is None:
            continue
        if len(x.shape) != len(y.shape):
            raise ConversionError(f"operand {x.name} changes rank between inputshape and inputshape2")
        x.shape = [d if d == e else UNKNOWN_DIM for d, e in zip(x.shape, y.shape)]
    _merge_bodies(first, second)
    return first


def _merge_bodies(first: Capture, second: Capture) -> None:
    """Moduleop bodies get the same unknown dims; a body captured in one run only is dropped."""
    if len(first.bodies) != len(second.bodies):
        for op, _ in first.bodies:
            op.subgraph = None
        first.bodies.clear()
        return
    for (_, body), (_, other) in zip(first.bodies, second.bodies):
        merge_shapes(body, other)


def _check_same_constants(op, other) -> None:
    """A parameter or weight that changes with the input shape was computed outside the
    traced shape arithmetic (e.g. `int(h / 2)`): the graph would be wrong for other shapes."""
    if op.params != other.params:
        changed = sorted(k for k in op.params if op.params[k] != other.params.get(k))
        raise ConversionError(f"{op.name} ({op.type}): parameter {', '.join(changed)} changes between "
                              f"inputshape and inputshape2 but is not traced shape arithmetic "
                              f"(use x.size(d) / x.shape arithmetic without int() or float division)")
    for key, attr in op.attrs.items():
        if other.attrs.get(key) is None or attr.shape != other.attrs[key].shape:
            raise ConversionError(f"{op.name} ({op.type}): constant {key} changes shape between "
                                  f"inputshape and inputshape2")
