"""Control flow and sequences, where the graph's structure is known at conversion time: If with a
condition known then runs one branch inline, Loop with a known trip count unrolls, sequences
are Python lists of tensors (SequenceAt by a known position)."""
from __future__ import annotations

import numpy as np
import torch

from ..values import ShapeValue
from .operands import axis
from .registry import RULES

rule = RULES.register
MAX_ITERATIONS = 4096


def _flag(value) -> bool:
    return bool(np.array(value.tolist() if hasattr(value, "tolist") else value, dtype=object).reshape(-1)[0])


@rule("If")
def if_(ctx):
    condition = ctx.scalar(0, "cond")
    return ctx.subgraph("then_branch" if condition else "else_branch", [])


@rule("Loop", produces=("Tensor.reshape", "torch.stack"))
def loop(ctx):
    trips = int(ctx.scalar(0, "M")) if ctx.has(0) else None
    going = bool(ctx.scalar(1, "cond")) if ctx.has(1) else True
    carried = list(ctx.inputs[2:])
    count = len(carried)
    scans, i = [], 0
    while going and (trips is None or i < trips):
        if i >= MAX_ITERATIONS:
            ctx.fail(f"Loop runs more than {MAX_ITERATIONS} iterations")
        outputs = ctx.subgraph("body", [ShapeValue(np.array(i, dtype=object)),
                                        ShapeValue(np.array(going, dtype=object), torch.bool), *carried])
        condition, carried, scanned = outputs[0], outputs[1:1 + count], outputs[1 + count:]
        if i == 0 and not isinstance(condition, ShapeValue) and _condition_reads_data(ctx, count):
            ctx.fail("a Loop whose condition is computed from the input data has no fixed unrolling")
        going = _flag(condition)
        scans.append(scanned)
        i += 1
    if scans and scans[0]:
        stacked = [torch.stack([torch.as_tensor(s[k]) if not isinstance(s[k], torch.Tensor) else s[k] for s in scans])
                   for k in range(len(scans[0]))]
    elif len(ctx.node.outputs) > count:
        ctx.fail("a Loop that runs no iteration has scan outputs of unknown shape")
    else:
        stacked = []
    return list(carried) + stacked


def _condition_reads_data(ctx, count: int) -> bool:
    """Whether the body's condition output depends on the carried values or on outer values
    that are not constants (then the number of iterations depends on the data)."""
    from ..node import outer_names

    body = ctx.node.attrs["body"]
    derived = {v.name for v in body.input[2:2 + count]}
    derived |= {n for n in outer_names(body) if not ctx.owner.is_constant(n)
                and not isinstance(ctx.captured.get(n), ShapeValue)}
    for node in body.node:
        if any(n in derived for n in node.input) or any(
                n in derived for a in node.attribute if a.type == a.GRAPH for n in outer_names(a.g)):
            derived |= {n for n in node.output if n}
    return body.output[0].name in derived


# --- sequences: Python lists -------------------------------------------------------------------
def _position(ctx, i: int, length: int, default: int) -> int:
    if not ctx.has(i):
        return default
    p = int(ctx.scalar(i, "position"))
    return p + length if p < 0 else p


@rule("SequenceConstruct")
def sequence_construct(ctx):
    return [list(ctx.tensor(i) for i in range(len(ctx.inputs)))]


@rule("SequenceEmpty")
def sequence_empty(ctx):
    return [[]]


@rule("SequenceAt")
def sequence_at(ctx):
    sequence = ctx.x(0)
    return sequence[_position(ctx, 1, len(sequence), 0)]


@rule("SequenceLength")
def sequence_length(ctx):
    return ShapeValue(np.array(len(ctx.x(0)), dtype=object))


@rule("SequenceInsert")
def sequence_insert(ctx):
    sequence = list(ctx.x(0))
    sequence.insert(_position(ctx, 2, len(sequence), len(sequence)), ctx.tensor(1))
    return [sequence]


@rule("SequenceErase")
def sequence_erase(ctx):
    sequence = list(ctx.x(0))
    del sequence[_position(ctx, 1, len(sequence), len(sequence) - 1)]
    return [sequence]


@rule("ConcatFromSequence", produces=("torch.cat", "torch.stack"))
def concat_from_sequence(ctx):
    sequence = ctx.x(0)
    if not sequence:
        ctx.fail("ConcatFromSequence of an empty sequence")
    a = int(ctx.attr("axis"))
    if int(ctx.attr("new_axis", 0)):
        return torch.stack(sequence, dim=axis(a, sequence[0].dim() + 1))
    return torch.cat(sequence, dim=axis(a, sequence[0].dim()))


@rule("SplitToSequence", produces=("Tensor.squeeze", "torch.split"))
def split_to_sequence(ctx):
    x = ctx.tensor(0)
    a = axis(int(ctx.attr("axis", 0)), x.dim())
    if not ctx.has(1):
        parts = torch.split(x, 1, dim=a)
        return [[p.squeeze(a) for p in parts] if not int(ctx.attr("keepdims", 1)) else list(parts)]
    sizes = ctx.ints(1, "split")
    if len(sizes) == 1:
        return [list(torch.split(x, int(sizes[0]), dim=a))]
    return [list(torch.split(x, [int(s) for s in sizes], dim=a))]
