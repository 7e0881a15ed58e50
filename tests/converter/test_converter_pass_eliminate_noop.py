import torch
import torch.nn as nn
import torch.nn.functional as F

from converter_helpers import check_links, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import eliminate_noop


class Noops(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.ident = nn.Identity()

    def forward(self, x):
        x = self.ident(self.drop(x))
        x = F.dropout(x, 0.1, training=False).contiguous()
        x = x.view(2, 3).permute(0, 1)
        return x.reshape(3, 2)  # a real reshape: stays


def test_dropout_identity_and_noop_reshapes_go_contiguous_stays():
    graph = trace(Noops().eval(), torch.rand(2, 3)).graph
    assert eliminate_noop.run(graph) is True
    assert types(graph) == ["pnnx.Input", "Tensor.contiguous", "Tensor.reshape", "pnnx.Output"]
    assert graph.ops[1].inputs[0] is graph.ops[0].outputs[0]
    check_links(graph)


def test_graph_output_read_through_a_noop():
    graph = trace(nn.Sequential(nn.Dropout()).eval(), torch.rand(2)).graph
    eliminate_noop.run(graph)
    assert types(graph) == ["pnnx.Input", "pnnx.Output"]
    assert graph.ops[1].inputs[0] is graph.ops[0].outputs[0]


class ZeroPads(nn.Module):
    def forward(self, x):
        x = F.pad(x, (0, 0, 0, 0))
        return F.pad(x, (0, 0, 0, 0), mode="replicate"), F.pad(x, (1, 0))


def test_pads_by_zero_go_real_pads_stay():
    graph = trace(ZeroPads().eval(), torch.rand(1, 2, 3, 8)).graph
    eliminate_noop.run(graph)
    assert types(graph) == ["pnnx.Input", "F.pad", "pnnx.Output", "pnnx.Output"]
    assert graph.ops[1].params["pad"] == [1, 0]
    check_links(graph)


def test_a_slice_written_with_the_singular_dim_stays():
    """`dim=2 start=2` (upstream's form, and ours for a bound computed from sizes) slices:
    only an empty `dims` list is a no-op (it dropped `x[..., 2:]` of a dynamic dim)."""
    from pnnx_reference.formats import pnnx_param

    graph = pnnx_param.loads("7767517\n3 2\n"
                             "pnnx.Input in0 0 1 0 #0=(1,?,?)f32\n"
                             "Tensor.slice s 1 1 0 1 dim=2 start=2 end=2147483647 step=1 #0=(1,?,?)f32 #1=(1,?,?)f32\n"
                             "pnnx.Output out0 1 0 1\n")
    assert eliminate_noop.run(graph) is False
    assert types(graph) == ["pnnx.Input", "Tensor.slice", "pnnx.Output"]
