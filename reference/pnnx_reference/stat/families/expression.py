"""pnnx.Expression: the operations of its expression, each once per output element."""
from __future__ import annotations

import math

import torch

from ...errors import PnnxError
from ...expression import Call, Input, ListExpr, parse
from ..registry import Count, moved, output, rule

# operations per element of each function the grammar names (1 for any other), as upstream
# counts them in its expression: 4 for a power and the transcendental functions, none for
# expm1, log1p (upstream's table lacks them) and boolean logic
_COSTS = {**dict.fromkeys("""pow sqrt rsqrt exp log log10 sin cos tan asin acos atan sinh cosh asinh acosh
    atanh erf atan2""".split(), 4), **dict.fromkeys("expm1 log1p and or xor not".split(), 0)}

# functions upstream keeps as operators of their own (F.tanh) where we fold them into the
# expression: counted as upstream counts that operator, and the expression around it as the
# pieces upstream's graph holds, each reading its operands and writing its result
_OPERATORS = {"tanh": 6}


def _operations(node) -> int:
    children = getattr(node, "args", None) or ()
    own = _COSTS.get(getattr(node, "func", None), 1) if children else 0
    return own + sum(_operations(c) for c in children)


@rule("pnnx.Expression")
def _expression(op) -> Count:
    """A list (`[@0]`, `[size(@0,0),-1]`: indices or a shape) is no tensor and counts nothing;
    a literal (`1e-08`) writes its one element."""
    try:
        tree = parse(str(op.params["expr"]))
    except PnnxError:
        return Count(0, 0)
    if isinstance(tree, ListExpr):
        return Count(0, 0)
    if not _operator_calls(tree):
        return Count(_operations(tree) * output(op), moved(op))
    return _split(tree, op)


def _operator_calls(node) -> list[Call]:
    """The operator calls (`tanh(...)`) in `node`, outermost first, without those inside them."""
    if isinstance(node, Call) and node.func in _OPERATORS:
        return [node]
    return [found for child in getattr(node, "args", ()) for found in _operator_calls(child)]


def _piece_operations(node) -> int:
    """_operations, stopping at operator calls (the pieces below them count apart)."""
    if isinstance(node, Call) and node.func in _OPERATORS:
        return 0
    children = getattr(node, "args", None) or ()
    own = _COSTS.get(getattr(node, "func", None), 1) if children else 0
    return own + sum(_piece_operations(c) for c in children)


def _piece_inputs(node) -> set:
    """The operands a piece reads: graph inputs (`@i`) and the results of operator calls."""
    if isinstance(node, Input) or isinstance(node, Call) and node.func in _OPERATORS:
        return {node}
    return set().union(*(_piece_inputs(c) for c in getattr(node, "args", ())))


def _split(tree, op) -> Count:
    """Counted as upstream's graph: one operator per distinct operator call (our folding may
    repeat one), one expression per piece between them."""
    def size(node) -> int:
        if node is tree:
            return output(op)
        return math.prod(_shape(node, op))

    flops = memory = 0
    pieces, done = [tree], set()
    while pieces:
        node = pieces.pop()
        if node in done:
            continue
        done.add(node)
        if isinstance(node, Call) and node.func in _OPERATORS:
            arg = node.args[0]
            flops += _OPERATORS[node.func] * size(node)
            memory += size(arg) + size(node)
            if isinstance(arg, Call):  # an operand computed by an expression piece below
                pieces.append(arg)
            continue
        operands = _piece_inputs(node)
        flops += _piece_operations(node) * size(node)
        memory += sum(size(o) for o in operands) + size(node)
        pieces += [o for o in operands if isinstance(o, Call)]
    return Count(flops, memory)


def _shape(node, op) -> tuple:
    """The broadcast shape of a subexpression (a literal is a scalar)."""
    if isinstance(node, Input):
        operand = op.inputs[node.index]
        return tuple(operand.shape) if operand.shape is not None else ()
    if isinstance(node, Call) and node.func != "size":
        return tuple(torch.broadcast_shapes(*(_shape(c, op) for c in node.args)))
    return ()
