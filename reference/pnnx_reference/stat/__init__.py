"""Model statistics, as upstream prints them after a conversion and writes at the top of
`_pnnx.py`: the input shapes, FLOPS and memory operations (tensor elements read and written).

    stat = model_stat(graph)
    stat.lines()   # ["model inputshape = [1,3,224,224]f32", "FLOPS = 3.635G", "memory OPS = 24.256M"]

Counts follow upstream's convention per operator (one rule per operator type in `families/`,
on the COUNTS registry): a floating-point operation per element per step of the operator's
arithmetic, and every element of every input, output and weight read or written once. Views
(reshape, permute, slices, ...) move nothing and count nothing; an operator upstream does not
count (custom operators, anything without a rule) counts 0, and so does an operator with a
dynamic (`?`) dim; an operand without a shape annotation counts as a scalar."""
from __future__ import annotations

from dataclasses import dataclass

from . import families  # noqa: F401  (registers every rule)
from .registry import COUNTS, Count

__all__ = ["COUNTS", "Count", "ModelStat", "model_stat", "human"]


@dataclass(frozen=True)
class ModelStat:
    inputshape: str
    flops: int
    memory_ops: int

    def lines(self) -> list[str]:
        return [f"model inputshape = {self.inputshape}", f"FLOPS = {human(self.flops)}",
                f"memory OPS = {human(self.memory_ops)}"]


def model_stat(graph) -> ModelStat:
    flops = memory = 0
    for op in graph.ops:
        count = count_op(op)
        flops += count.flops
        memory += count.memory
    return ModelStat(_inputshape(graph), flops, memory)


def count_op(op) -> Count:
    rule = COUNTS.lookup(op.type)
    if rule is None or not _shapes_known(op):
        return Count(0, 0)
    return rule.fn(op)


def _shapes_known(op) -> bool:
    """No dynamic (`?`) dim; an operand without a shape is a scalar."""
    return all(o.shape is None or all(d >= 0 for d in o.shape) for o in (*op.inputs, *op.outputs))


def _inputshape(graph) -> str:
    shapes = []
    for op in graph.ops:
        if op.type == "pnnx.Input":
            operand = op.outputs[0]
            dims = ",".join("?" if d < 0 else str(d) for d in operand.shape or [])
            shapes.append(f"[{dims}]{operand.dtype or ''}")
    return ",".join(shapes)


_UNITS = ((10 ** 15, "P"), (10 ** 12, "T"), (10 ** 9, "G"), (10 ** 6, "M"), (10 ** 3, "K"))


def human(count: int) -> str:
    """3635000000 -> 3.635G (powers of 1000, up to 3 decimals rounded half up in integers as
    upstream rounds them, trailing zeros trimmed)."""
    count = int(count)
    for size, unit in _UNITS:
        if count >= size:
            whole, rest = divmod(count, size)
            thousandths = (rest * 1000 + size // 2) // size
            if thousandths == 1000:
                whole, thousandths = whole + 1, 0
            text = f"{whole}.{thousandths:03d}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    return str(count)
