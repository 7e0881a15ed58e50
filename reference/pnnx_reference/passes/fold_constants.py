"""Replace computations that do not depend on the graph inputs by their traced value
(`pnnx.Attribute pnnx_fold_<operand>`), and shape arithmetic over known (static) shapes by
a plain parameter (`Tensor.view ... shape=(1,-1)`)."""
from __future__ import annotations

import re

import torch

from ..ir import Attribute, Graph, Operator
from ..random_ops import is_random
from .exprtext import InputList, substitute
from .rewire import set_inputs, static_shape

INT_MAX = 2147483647  # a slice bound meaning "to the end", as upstream writes it

# Results that depend on the input's shape and dtype only, not on its values.
_SHAPE_ONLY = {"Tensor.new_zeros", "Tensor.new_ones", "Tensor.new_full", "Tensor.new_empty",
               "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like"}


def _shape_only(op: Operator) -> bool:
    return op.type in _SHAPE_ONLY and all(static_shape(i) for i in op.inputs)


def _constant_ops(graph: Graph) -> set[int]:
    constant: set[int] = set()  # ids of operands known to be constant
    for op in graph.ops:
        if op.type in ("pnnx.Input", "pnnx.Output") or is_random(op):
            continue
        if op.type == "pnnx.Attribute" or _shape_only(op) or all(id(i) in constant for i in op.inputs):
            constant.update(id(o) for o in op.outputs)
    return constant


def _fold_tensors(graph: Graph, context) -> None:
    constant = _constant_ops(graph)
    for op in list(graph.ops):
        if op.type in ("pnnx.Attribute", "pnnx.Input", "pnnx.Output") or not op.outputs:
            continue
        if not all(id(o) in constant for o in op.outputs):
            continue
        values = [context.values.get(o) for o in op.outputs]
        if not all(isinstance(v, torch.Tensor) for v in values):
            continue
        for out, value in zip(list(op.outputs), values):
            if out.consumers:
                _replace_with_attribute(graph, out, value)


def _reader_slot(graph: Graph, out) -> Operator:
    """Where capture would have put a weight read in place of `out`: right before its first
    reader, among the other weights that reader reads, in the reader's input order."""
    reader = min(out.consumers, key=graph.ops.index)
    position = reader.inputs.index(out)
    slot = graph.ops.index(reader)
    while slot > 0 and _read_later(graph.ops[slot - 1], reader, position):
        slot -= 1
    return graph.ops[slot]


def _read_later(op: Operator, reader: Operator, position: int) -> bool:
    """`op` is a weight that `reader` reads first, at an input after `position` (ops between
    `op` and `reader` are weights too, so nothing reads it earlier)."""
    if op.type != "pnnx.Attribute" or len(op.outputs) != 1:
        return False
    weight = op.outputs[0]
    first = [i for i, x in enumerate(reader.inputs) if x is weight]
    return bool(first) and first[0] > position


def _replace_with_attribute(graph: Graph, out, value) -> None:
    attr = graph.new_operator("pnnx.Attribute", f"pnnx_fold_{out.name}", before=_reader_slot(graph, out))
    attr.attrs["data"] = Attribute.from_torch(value)
    new = graph.new_operand(f"{out.name}_fold", out.shape, out.dtype)
    graph.connect(attr, outputs=[new])
    graph.replace_uses(out, new)


def _reads_static_shapes(op: Operator) -> bool:
    return op.type == "pnnx.Expression" and all(static_shape(i) for i in op.inputs)


def _fold_shape_inputs(graph: Graph, context) -> None:
    """An input fed by shape arithmetic over static shapes becomes a parameter."""
    for op in graph.ops:
        if not op.inputnames:
            continue
        keep = [(i, n) for i, n in zip(op.inputs, op.inputnames)]
        folded = False
        for operand, name in list(keep):
            value = context.values.get(operand)
            producer = operand.producer
            if isinstance(value, (int, list)) and producer is not None and _reads_static_shapes(producer):
                op.params[name] = value
                keep.remove((operand, name))
                folded = True
        if folded:
            op.params = dict(sorted(op.params.items()))
            set_inputs(graph, op, [i for i, _ in keep], [n for _, n in keep])
            _plural_slice(graph, op)


_SLICE_KEYS = ("dims", "starts", "ends", "steps", "selects")


def _plural_slice(graph: Graph, op: Operator) -> None:
    """A slice whose bounds were sizes (`x[..., :x.size(-1) // 2]`) and are now all constants is
    written as any static slice is (dims/starts/ends/steps/selects), as the capture writes it,
    and joins the slice of other dims it reads (the capture cuts `x[:, :h, :w]` one dim at a
    time when its bounds are sizes)."""
    if op.type != "Tensor.slice" or "dim" not in op.params or op.input("start") or op.input("end"):
        return
    p = op.params
    op.params = {"dims": [p["dim"]], "ends": [p.get("end", INT_MAX)], "selects": [INT_MAX],
                 "starts": [p.get("start", 0)], "steps": [p.get("step", 1)]}
    _join(graph, op.inputs[0].producer, op)
    out = op.outputs[0]
    if len(out.consumers) == 1:
        _join(graph, op, out.consumers[0])


def _join(graph: Graph, first: Operator | None, second: Operator) -> None:
    """`second` slicing the result of `first` (read by it alone) along other dims: one slice."""
    if first is None or first.type != "Tensor.slice" or second.type != "Tensor.slice":
        return
    mid = second.inputs[0]
    if len(first.inputs) != 1 or len(second.inputs) != 1 or len(mid.consumers) != 1 or not mid.shape \
            or mid.producer is not first or not all(isinstance(q.params.get(k), list)
                                                    for q in (first, second) for k in _SLICE_KEYS):
        return
    rows = [r for q in (first.params, second.params) for r in zip(*(q[k] for k in _SLICE_KEYS))]
    rank = len(mid.shape)
    if any(r[4] != INT_MAX for r in rows) or len({r[0] % rank for r in rows}) != len(rows):
        return  # a select renumbers the dims after it; a dim sliced twice stays two slices
    rows.sort(key=lambda r: (r[0] < 0, r[0]))
    second.params = {k: [r[i] for r in rows] for i, k in enumerate(_SLICE_KEYS)}
    set_inputs(graph, second, [first.inputs[0]], second.inputnames or None)


_SIZE = re.compile(r"size\(@(\d+),(-?\d+)\)")


def _known_dim(operand, dim: int) -> int | None:
    shape = operand.shape
    if shape is None or not -len(shape) <= dim < len(shape) or shape[dim] < 0:
        return None
    return shape[dim]


def _fold_sizes(graph: Graph) -> None:
    """`mul(@0,size(@0,1))` with a static dim 1 of 4 becomes `mul(@0,4)`."""
    for op in graph.ops:
        if op.type != "pnnx.Expression" or "size(" not in op.params.get("expr", ""):
            continue

        def value(match):
            known = _known_dim(op.inputs[int(match.group(1))], int(match.group(2)))
            return match.group(0) if known is None else str(known)

        text = _SIZE.sub(value, op.params["expr"])
        if text != op.params["expr"]:
            kept = InputList()
            op.params["expr"] = substitute(text, lambda i: kept.ref(op.inputs[i]))
            set_inputs(graph, op, kept.operands)


def fold_shapes(graph: Graph, context) -> None:
    """The part that creates no weight: shape arithmetic over static shapes."""
    _fold_shape_inputs(graph, context)
    _fold_sizes(graph)


def run(graph: Graph, context) -> bool:
    fold_shapes(graph, context)
    _fold_tensors(graph, context)
    return True
