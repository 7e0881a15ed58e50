"""A branch on the input values (`if pad_token_id in input_ids[:, [-1, 0]]: warn(...)`) that
cannot change the graph: the model is traced again with every other combination of outcomes
at its branches (valuedep.ValueDependence.forced); when each records the same graph as the
example did, the branches are accepted with a note. Anything else (another graph, an error,
a branch the example did not reach, more than MAX_BRANCHES branches) is refused as any
value-dependent conversion is, naming the user's source line of the branch."""
from __future__ import annotations

import itertools
from typing import Callable

from ...errors import ConversionError, OtherPath, PnnxError
from ...ir import Graph
from .valuedep import ValueDependence, refusal

MAX_BRANCHES = 4  # 2**4 traces at most


def signature(graph: Graph) -> list:
    """The graph with its operator and operand names left out (counters, which any extra call
    on either path moves): types, parameters, weights, shapes and the wiring."""
    index = {id(o): i for i, o in enumerate(graph.operands)}
    operands = [(o.shape, o.dtype) for o in graph.operands]
    ops = [(op.type, op.params, op.inputnames, [index.get(id(x)) for x in op.inputs],
            [index.get(id(y)) for y in op.outputs],
            sorted((k, a.shape, a.dtype, bytes(a.data)) for k, a in op.attrs.items())) for op in graph.ops]
    return [operands, ops]


def prove(policy: ValueDependence, graph: Graph, retrace: Callable[[ValueDependence], Graph]) -> list[str]:
    """Notes for the branches of `policy` (the example's trace, which recorded `graph`), or
    ConversionError for the first branch whose other outcome changes what is recorded.
    `retrace(policy)` traces the model again under another policy."""
    taken = [outcome for _, outcome in policy.branches]
    if len(taken) > MAX_BRANCHES:
        raise ConversionError(refusal(policy.branches[0][0]))
    expected = signature(graph)
    for outcomes in itertools.product((False, True), repeat=len(taken)):
        if list(outcomes) == taken:
            continue
        forced = ValueDependence(forced=list(outcomes))
        try:
            same = signature(retrace(forced)) == expected and len(forced.branches) == len(taken)
        except (PnnxError, OtherPath):
            same = False
        if not same:
            first = next(i for i, (a, b) in enumerate(zip(outcomes, taken)) if a != b)
            raise ConversionError(refusal(policy.branches[first][0]))
    return list(dict.fromkeys(f"{where}: accepted, a branch whose every outcome records the same graph"
                              for where, _ in policy.branches))


