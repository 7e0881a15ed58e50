import torch
import torch.nn as nn

from converter_helpers import check_links
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import fuse_expression


def _exprs(graph):
    return [op.params["expr"] for op in graph.ops if op.type == "pnnx.Expression"]


class Shared(nn.Module):
    def forward(self, x, y):
        a = x * x + y
        return a * 3, a.exp()  # `a` has two consumers: it stays its own expression


def test_fuses_single_consumer_chains_and_dedups_inputs():
    class Chain(nn.Module):
        def forward(self, x, y):
            return ((x * x + y) - x).abs()

    graph = trace(Chain(), (torch.rand(3), torch.rand(3))).graph
    fuse_expression.run(graph)
    assert _exprs(graph) == ["abs(sub(add(mul(@0,@0),@1),@0))"]
    expr = graph.ops[2]
    assert [o.name for o in expr.inputs] == [graph.ops[0].outputs[0].name, graph.ops[1].outputs[0].name]
    check_links(graph)


def test_operand_with_two_consumers_is_not_inlined():
    graph = trace(Shared(), (torch.rand(3), torch.rand(3))).graph
    fuse_expression.run(graph)
    assert _exprs(graph) == ["add(mul(@0,@0),@1)", "mul(@0,3)", "exp(@0)"]
    check_links(graph)


def test_non_expression_consumer_stops_fusion():
    class Mixed(nn.Module):
        def forward(self, x):
            return torch.relu(x + 1) * 2

    graph = trace(Mixed(), torch.rand(3)).graph
    assert fuse_expression.run(graph) is False
    assert _exprs(graph) == ["add(@0,1)", "mul(@0,2)"]
