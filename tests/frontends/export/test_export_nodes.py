"""FX node helpers of the .pt2 frontend on graphs deeper than Python's recursion limit
(vit_b_16's program failed with RecursionError in feeds_only_checks)."""
import torch
from torch.fx import Graph

from pnnx_reference.frontends.export.nodes import feeds_only_checks

aten = torch.ops.aten


def _chain(length: int, last):
    graph = Graph()
    x = graph.placeholder("x")
    nodes = [x]
    for _ in range(length):
        nodes.append(graph.call_function(aten.neg.default, (nodes[-1],)))
    last(graph, nodes[-1])
    return nodes


def test_a_deep_chain_read_by_the_output_is_computed():
    nodes = _chain(5000, lambda g, n: g.output(n))
    assert not any(feeds_only_checks(n) for n in nodes)


def test_a_deep_chain_read_only_by_a_check_is_not():
    nodes = _chain(5000, lambda g, n: g.call_function(aten._assert_async.default, (n,)))
    assert all(feeds_only_checks(n) for n in nodes)
