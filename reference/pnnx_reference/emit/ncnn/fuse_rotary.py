"""Rotary position embedding written by hand -> one `ncnn.RotaryEmbed` (ncnn's RotaryEmbed layer,
non-interleaved), the form LLaMA-style models write:

    rotate_half(x) = cat((-x[..., E/2:], x[..., :E/2]), -1);  y = x * cos + rotate_half(x) * sin

RotaryEmbed computes y[j] = x[j] cos[j] - x[j + E/2] sin[j] and y[j + E/2] = x[j] sin[j] +
x[j + E/2] cos[j] from half-width (L, E/2) tables, which is the same only where cos and sin
repeat their first half in their second: so they must be constants that do, broadcast over
every leading axis of an (L, E) or (heads, L, E) x (a 4-d x with a Mat batch of 1), or rows
of such a constant looked up by position (F.embedding(positions, table), unsqueezed over the
heads: a decode step's tables), then looked up in the table's first half. Anything else
(tables computed otherwise, interleaved pairs, other slices) is lowered as written.
Only in the ncnn emitter, as the other fusions (see prepass)."""
from __future__ import annotations

import numpy as np

from ... import expression as ex
from ...ir import Attribute, Graph, Operand, Operator
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


def _equal_halves(data: np.ndarray) -> bool:
    e = data.shape[-1]
    return bool(np.array_equal(data[..., : e // 2], data[..., e // 2:]))


def _lookup(operand: Operand, x: Operand) -> tuple[Operator, np.ndarray] | None:
    """(the F.embedding, its table) for unsqueeze(F.embedding(positions, table), 1) of shape
    (1, 1, L, E) over a (1, heads, L, E) x, the table a constant repeating its halves."""
    squeeze = operand.producer
    if squeeze is None or squeeze.type not in ("Tensor.unsqueeze", "torch.unsqueeze") or len(x.shape) != 4:
        return None
    lookup = squeeze.inputs[0].producer
    if squeeze.params.get("dim") != 1 or lookup is None or lookup.type != "F.embedding" or len(lookup.inputs) != 2:
        return None
    table = lookup.inputs[1].producer
    if any(lookup.params.get(k) is not None for k in ("max_norm", "padding_idx")) or table is None \
            or table.type != "pnnx.Attribute" or list(operand.shape or []) != [1, 1] + list(x.shape[-2:]):
        return None
    data = table.attrs["data"].to_numpy()
    return (lookup, data) if data.ndim == 2 and data.shape[1] == x.shape[-1] and _equal_halves(data) else None


def _table(operand: Operand, x: Operand) -> np.ndarray | None:
    """A constant (..., L, E) table of 1-sized leading axes whose halves are equal."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Attribute" or operand.dtype != "f32" or not operand.shape:
        return None
    shape = list(operand.shape)
    if shape[-2:] != list(x.shape[-2:]) or any(d != 1 for d in shape[:-2]) or len(shape) > len(x.shape):
        return None
    data = producer.attrs["data"].to_numpy().reshape(shape[-2:])
    return data if _equal_halves(data) else None


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
                if chain is not None and all(_table(t, x) is not None or _lookup(t, x) for t in (cos, sin)):
                    return x, cos, sin, chain
    return None


def _half_lookup(graph: Graph, table: Operand, x: Operand, halves: dict) -> Operand:
    """A constant table as it is; a looked-up one as the lookup of its first half, (1, L, E/2)
    (one per table: q and k share it)."""
    found = _lookup(table, x)
    if found is None:
        return table
    lookup, data = found
    if lookup.name not in halves:
        e = data.shape[1]
        half = graph.new_operator("pnnx.Attribute", f"{lookup.name}_half", before=lookup)
        half.attrs["data"] = Attribute.from_numpy(np.ascontiguousarray(data[:, : e // 2]))
        graph.connect(half, outputs=[graph.new_operand(f"{lookup.name}_half_table", [data.shape[0], e // 2], "f32")])
        rows = graph.new_operator("F.embedding", f"{lookup.name}_half_rows", before=lookup)
        rows.params.update(lookup.params)
        out = lookup.outputs[0]
        graph.connect(rows, inputs=[lookup.inputs[0], half.outputs[0]],
                      outputs=[graph.new_operand(f"{out.name}_half", list(out.shape[:-1]) + [e // 2], out.dtype)])
        rows.inputnames = ["input", "weight"]
        halves[lookup.name] = rows.outputs[0]
    return halves[lookup.name]


def run(graph: Graph) -> None:
    halves: dict[str, Operand] = {}
    for op in list(graph.ops):
        found = _match(op) if op in graph.ops else None
        if found is None:
            continue
        x, cos, sin, chain = found
        cos, sin = (_half_lookup(graph, t, x, halves) for t in (cos, sin))
        rope = graph.new_operator(TYPE, f"rotary_{op.name}", before=op)
        out = op.outputs[0]
        graph.connect(rope, inputs=[x, cos, sin],
                      outputs=[graph.new_operand(f"{out.name}_rope", out.shape, out.dtype)])
        rope.inputnames = ["input", "cos", "sin"]
        graph.replace_uses(out, rope.outputs[0])
        for dead in [op] + chain:
            graph.remove_operator(dead)
