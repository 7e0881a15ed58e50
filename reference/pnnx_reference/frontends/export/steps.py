"""A step replaces several FX nodes by one Python-API call: a standard `nn.X` module rebuilt
from `nn_module_stack` (`modules.py`), a decomposed composite folded back (`folds.py`), or a
copy of a view onto itself, skipped (`self_copies.py`).
The interpreter runs a step where its last node stands."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from torch.fx.node import Node, map_arg


@dataclass
class Step:
    nodes: list[Node]                 # the nodes it stands for, in graph order
    inputs: list[Node]                # the values it reads from outside, in its call order
    outputs: list[Node]               # the nodes whose values are used outside it
    run: Callable[[list], list]       # input values -> output values
    what: str = ""                    # for messages: `nn.Conv2d conv`, `F.normalize`
    extra: dict = field(default_factory=dict)


def external_inputs(nodes: list[Node], skip=lambda node: False) -> list[Node]:
    """The nodes outside `nodes` that they read, in first-use order (`skip`: not counted)."""
    inside, found = set(nodes), []
    for node in nodes:
        def note(arg):
            if arg not in inside and arg not in found and not skip(arg):
                found.append(arg)
            return arg
        map_arg((node.args, node.kwargs), note)
    return found


def outputs_of(nodes: list[Node]) -> list[Node]:
    inside = set(nodes)
    return [n for n in nodes if any(u not in inside for u in n.users)]


def well_placed(nodes: list[Node], order: dict) -> bool:
    """The step can run where its last node stands: no node outside it, placed before that,
    reads one of its values, and none of its inputs is computed from its own nodes."""
    inside, last = set(nodes), max(order[n] for n in nodes)
    for node in nodes:
        if any(u not in inside and order[u] < last for u in node.users):
            return False
    return not any(_reads(i, inside) for i in external_inputs(nodes))


def _reads(node: Node, inside: set, seen=None) -> bool:
    """Whether `node` depends on a node of `inside`."""
    seen = set() if seen is None else seen
    for arg in node.all_input_nodes:
        if arg in inside:
            return True
        if arg not in seen:
            seen.add(arg)
            if _reads(arg, inside, seen):
                return True
    return False


class Plan:
    """Steps keyed by their last node; every other node of a step is skipped."""

    def __init__(self, graph):
        self.order = {n: i for i, n in enumerate(graph.nodes)}
        self.at: dict[Node, Step] = {}
        self.covered: set[Node] = set()

    def free(self, nodes: list[Node]) -> bool:
        return not any(n in self.covered for n in nodes)

    def add(self, step: Step) -> None:
        last = max(step.nodes, key=self.order.__getitem__)
        self.at[last] = step
        self.covered.update(step.nodes)
