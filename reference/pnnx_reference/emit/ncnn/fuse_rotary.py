"""Rotary position embedding written by hand -> one `ncnn.RotaryEmbed` (ncnn's RotaryEmbed layer,
non-interleaved), the form LLaMA-style models write:

    rotate_half(x) = cat((-x[..., E/2:], x[..., :E/2]), -1);  y = x * cos + rotate_half(x) * sin

RotaryEmbed computes y[j] = x[j] cos[j] - x[j + E/2] sin[j] and y[j + E/2] = x[j] sin[j] +
x[j + E/2] cos[j] from half-width (L, E/2) tables, which is the same only where cos and sin
repeat their first half in their second: so they must be constants that do, broadcast over
every leading axis of an (L, E) or (heads, L, E) x (a 4-d x with a Mat batch of 1). Anything
else (tables computed at run time, interleaved pairs, other slices) is lowered as written.
Only in the ncnn emitter, as the other fusions (see prepass)."""
from __future__ import annotations

import numpy as np

from ... import expression as ex
from ...ir import Graph, Operand, Operator
from ...passes.rewire import single_consumer

TYPE = "ncnn.RotaryEmbed"
_SLICES = {"Tensor.slice"}
_ENDLESS = 2147483647


def _half(op: Operator | None, x: Operand, first: bool) -> bool:
    """op is x[..., :E/2] (first) or x[..., E/2:] along the last dim, step 1."""
    if op is None or op.type not in _SLICES or op.inputs != [x]:
        return False
    p, e = op.params, x.shape[-1]
    if list(p.get("dims", [])) not in ([-1], [len(x.shape) - 1]) or list(p.get("steps", [1])) != [1]:
        return False
    start, end = list(p.get("starts", [None]))[0], list(p.get("ends", [None]))[0]
    return (start, end) == (0, e // 2) if first else start == e // 2 and end in (e, _ENDLESS)


def _rotated_half(cat: Operator | None, x: Operand) -> list[Operator] | None:
    """[cat, neg, both slices] when cat is cat((-x2, x1), -1) of x's halves."""
    if cat is None or cat.type != "torch.cat" or len(cat.inputs) != 2:
        return None
    if cat.params.get("dim") not in (-1, len(x.shape) - 1):
        return None
    neg, x1 = cat.inputs[0].producer, cat.inputs[1].producer
    if neg is None or neg.type != "pnnx.Expression" or neg.params.get("expr") != "neg(@0)":
        return None
    x2 = neg.inputs[0].producer
    if not (_half(x1, x, True) and _half(x2, x, False)):
        return None
    if any(single_consumer(o.outputs[0]) is None for o in (neg, x1, x2)):
        return None
    return [cat, neg, x1, x2]


def _table(operand: Operand, x: Operand) -> np.ndarray | None:
    """A constant (..., L, E) table of 1-sized leading axes whose halves are equal."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Attribute" or operand.dtype != "f32" or not operand.shape:
        return None
    shape, e = list(operand.shape), x.shape[-1]
    if shape[-2:] != list(x.shape[-2:]) or any(d != 1 for d in shape[:-2]) or len(shape) > len(x.shape):
        return None
    data = producer.attrs["data"].to_numpy().reshape(shape[-2:])
    return data if np.array_equal(data[:, : e // 2], data[:, e // 2:]) else None


def _terms(node) -> list[tuple[int, int]] | None:
    """[(a, b), (c, d)] for add(mul(@a,@b),mul(@c,@d)), operands as input indices."""
    if not (isinstance(node, ex.Call) and node.func == "add" and len(node.args) == 2):
        return None
    terms = []
    for term in node.args:
        if not (isinstance(term, ex.Call) and term.func == "mul" and len(term.args) == 2
                and all(isinstance(a, ex.Input) for a in term.args)):
            return None
        terms.append((term.args[0].index, term.args[1].index))
    return terms


def _match(op: Operator):
    """(x, cos, sin, removed ops) when op is x * cos + rotate_half(x) * sin."""
    if op.type != "pnnx.Expression" or len(op.inputs) != 4 or len(set(map(id, op.inputs))) != 4:
        return None
    terms = _terms(ex.parse(op.params.get("expr", "")))
    if terms is None or sorted(i for t in terms for i in t) != [0, 1, 2, 3]:
        return None
    for plain, rotated in (terms, terms[::-1]):
        for x_i, cos_i in (plain, plain[::-1]):
            x = op.inputs[x_i]
            if not x.shape or len(x.shape) not in (2, 3, 4) or x.shape[-1] % 2 or x.dtype != "f32":
                continue
            if len(x.shape) == 4 and x.shape[0] != 1:
                continue
            for r_i, sin_i in (rotated, rotated[::-1]):
                cos, sin = op.inputs[cos_i], op.inputs[sin_i]
                chain = _rotated_half(op.inputs[r_i].producer, x)
                if chain is not None and _table(cos, x) is not None and _table(sin, x) is not None:
                    return x, cos, sin, chain
    return None


def run(graph: Graph) -> None:
    for op in list(graph.ops):
        found = _match(op) if op in graph.ops else None
        if found is None:
            continue
        x, cos, sin, chain = found
        rope = graph.new_operator(TYPE, f"rotary_{op.name}", before=op)
        out = op.outputs[0]
        graph.connect(rope, inputs=[x, cos, sin],
                      outputs=[graph.new_operand(f"{out.name}_rope", out.shape, out.dtype)])
        rope.inputnames = ["input", "cos", "sin"]
        graph.replace_uses(out, rope.outputs[0])
        for dead in [op] + chain:
            graph.remove_operator(dead)
