"""The three examples of the PNNX README come out as the README shows them."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from converter_helpers import op_of, types
from pnnx_reference.api import capture
from pnnx_reference.formats.pnnx_param import dumps


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(embed_dim=256, num_heads=32)

    def forward(self, x):
        x, _ = self.attention(x, x, x)
        return x


class Foo(nn.Module):
    def forward(self, x, y):
        return torch.sqrt((2 * x + y) / 12)


class Normalize(nn.Module):
    def forward(self, x):
        return F.normalize(x, eps=1e-3)


def test_multiheadattention_stays_one_module():
    graph = capture(Attention(), torch.rand(4, 1, 256))
    assert types(graph) == ["pnnx.Input", "nn.MultiheadAttention", "pnnx.Output"]
    op = op_of(graph, "nn.MultiheadAttention")
    assert op.name == "attention"
    assert op.params["embed_dim"] == 256 and op.params["num_heads"] == 32
    assert op.params["bias"] is True and op.params["add_bias_kv"] is False
    assert sorted(op.attrs) == ["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]
    assert op.attrs["in_proj_weight"].shape == (768, 256)
    assert [i.name for i in op.inputs] == ["0", "0", "0"]


def test_math_is_one_expression():
    text = dumps(capture(Foo(), (torch.rand(3, 4), torch.rand(3, 4))))
    assert text == (
        "7767517\n4 3\n"
        "pnnx.Input               pnnx_input_0             0 1 0 #0=(3,4)f32\n"
        "pnnx.Input               pnnx_input_1             0 1 1 #1=(3,4)f32\n"
        # named from 0 like upstream's fuse_expression, not after the fourth captured call
        "pnnx.Expression          pnnx_expr_0              2 1 0 1 2 "
        "expr=sqrt(div(add(mul(@0,2),@1),12)) #0=(3,4)f32 #1=(3,4)f32 #2=(3,4)f32\n"
        "pnnx.Output              pnnx_output_0            1 0 2 #2=(3,4)f32\n")


def test_math_stays_separate_at_optlevel0():
    graph = capture(Foo(), (torch.rand(3, 4), torch.rand(3, 4)), optlevel=0)
    assert [op.params["expr"] for op in graph.ops if op.type == "pnnx.Expression"] == \
        ["mul(@0,2)", "add(@0,@1)", "div(@0,12)", "sqrt(@0)"]


def test_normalize_is_one_function():
    text = dumps(capture(Normalize(), torch.rand(1, 12, 16)))
    assert text.splitlines()[3] == (
        "F.normalize              F.normalize_0            1 1 0 1 dim=1 eps=0.001 p=2.0 $input=0 "
        "#0=(1,12,16)f32 #1=(1,12,16)f32")
