import torch
import torch.nn as nn

from converter_helpers import check_links
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import canonicalize


def test_operands_are_renamed_in_production_order():
    graph = trace(nn.Sequential(nn.ReLU(), nn.Tanh()), torch.rand(2)).graph
    assert graph.ops[0].outputs[0].name.startswith("pnnx_")
    canonicalize.run(graph)
    assert [o.name for op in graph.ops for o in op.outputs] == ["0", "1", "2"]
    assert [o.name for o in graph.operands] == ["0", "1", "2"]
    check_links(graph)


def test_numbered_operator_names_are_numbered_again_in_graph_order():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 1)

        def forward(self, x):
            y = torch.relu(self.conv(x * 2))
            return torch.sigmoid(y) + 1, y.flatten(1)

    graph = trace(M(), torch.rand(1, 3, 2, 2)).graph
    for op, name in zip([op for op in graph.ops if op.type != "pnnx.Input"], ["pnnx_expr_7", "conv", "torch.relu_4",
                                                                              "torch.sigmoid_9", "pnnx_expr_2",
                                                                              "Tensor.flatten_1"]):
        op.name = name
    canonicalize.run(graph)
    assert [op.name for op in graph.ops][1:7] == ["pnnx_expr_0", "conv", "torch.relu_0", "torch.sigmoid_1",
                                                  "pnnx_expr_1", "Tensor.flatten_2"]
