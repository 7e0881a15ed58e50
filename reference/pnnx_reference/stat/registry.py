"""The counting table: pnnx operator type -> fn(op) -> Count(flops, memory)."""
from __future__ import annotations

import math
from typing import NamedTuple

from ..registry import Registry

COUNTS = Registry("model-stat", "pnnx operator type -> fn(op) -> Count(flops, memory operations)")
rule = COUNTS.register


class Count(NamedTuple):
    flops: int
    memory: int


def numel(operand) -> int:
    """An operand without a shape annotation is a scalar, as upstream counts it."""
    return math.prod(operand.shape) if operand.shape is not None else 1


def inputs(op) -> int:
    return sum(numel(o) for o in op.inputs)


def outputs(op) -> int:
    return sum(numel(o) for o in op.outputs)


def output(op) -> int:
    """The first result's elements (an operator's other results are indices or states)."""
    return numel(op.outputs[0])


def weights(op) -> int:
    return sum(math.prod(a.shape) for a in op.attrs.values())


def moved(op) -> int:
    """Every input, output and weight element read or written once."""
    return inputs(op) + outputs(op) + weights(op)
