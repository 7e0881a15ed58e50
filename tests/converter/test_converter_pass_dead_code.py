import torch
import torch.nn as nn

from converter_helpers import check_links, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import dead_code


class Unused(nn.Module):
    def forward(self, x, y):
        unused = torch.relu(x).sum(1)  # a dead chain of two ops
        del unused
        return x * 2


def test_dead_chain_is_removed_inputs_stay():
    graph = trace(Unused(), (torch.rand(2, 3), torch.rand(2, 3))).graph
    assert types(graph).count("torch.relu") == 1
    assert dead_code.run(graph) is True
    assert types(graph) == ["pnnx.Input", "pnnx.Input", "pnnx.Expression", "pnnx.Output"]
    check_links(graph)
    assert dead_code.run(graph) is False
