import torch
import torch.nn as nn

from converter_helpers import check_links
from pnnx_reference.capture import trace
from pnnx_reference.passes import canonicalize


def test_operands_are_renamed_in_production_order():
    graph = trace(nn.Sequential(nn.ReLU(), nn.Tanh()), torch.rand(2)).graph
    assert graph.ops[0].outputs[0].name.startswith("pnnx_")
    canonicalize.run(graph)
    assert [o.name for op in graph.ops for o in op.outputs] == ["0", "1", "2"]
    assert [o.name for o in graph.operands] == ["0", "1", "2"]
    check_links(graph)
