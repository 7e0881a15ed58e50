import torch
import torch.nn as nn

from converter_helpers import check_links, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import PassContext, fold_constants, fuse_adjacent


def test_adjacent_reshapes_merge():
    class Reshapes(nn.Module):
        def forward(self, x):
            return x.view(4, 6).reshape(2, 12).view(24)

    graph = trace(Reshapes(), torch.rand(2, 3, 4)).graph
    assert fuse_adjacent.run(graph) is True
    assert types(graph) == ["pnnx.Input", "Tensor.view", "pnnx.Output"]
    assert graph.ops[1].params["shape"] == [24] and graph.ops[1].inputs[0] is graph.ops[0].outputs[0]
    check_links(graph)


def test_adjacent_permutes_compose():
    class Permutes(nn.Module):
        def forward(self, x):
            return x.permute(0, 2, 3, 1).permute(0, 3, 1, 2).permute(3, 1, 0, 2)

    x = torch.rand(2, 3, 4, 5)
    graph = trace(Permutes(), x).graph
    fuse_adjacent.run(graph)
    assert types(graph) == ["pnnx.Input", "Tensor.permute", "pnnx.Output"]
    dims = graph.ops[1].params["dims"]
    assert torch.equal(x.permute(*dims), Permutes()(x))


def test_reshape_with_dynamic_shape_input_is_kept():
    class Dyn(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1).view(-1)

    captured = trace(Dyn(), torch.rand(2, 3))
    fuse_adjacent.run(captured.graph)
    assert types(captured.graph).count("Tensor.view") == 2
    fold_constants.run(captured.graph, PassContext(captured.values))
    fuse_adjacent.run(captured.graph)
    assert [op.params.get("shape") for op in captured.graph.ops if op.type == "Tensor.view"] == [[-1]]
