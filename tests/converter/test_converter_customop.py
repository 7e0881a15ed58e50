"""Operators registered with torch.library in a namespace of their own -> pnnx.custom_op."""
import torch
import torch.nn as nn

from converter_helpers import op_of
from pnnx_reference.api import capture
from pnnx_reference.formats.pnnx_param import dumps

_LIB = torch.library.Library("pnnxref_test", "DEF")
_LIB.define("blend(Tensor a, Tensor b, float alpha, int bias) -> Tensor")
_LIB.impl("blend", lambda a, b, alpha, bias: a * alpha + b + bias, "CPU")


class Blend(nn.Module):
    def forward(self, x, y):
        return torch.ops.pnnxref_test.blend(x, y, 0.25, 3)


def test_custom_op_keeps_its_arguments():
    graph = capture(Blend(), (torch.rand(2, 3), torch.rand(2, 3)))
    op = op_of(graph, "pnnx.custom_op.pnnxref_test.blend")
    assert op.params == {"arg_2": 0.25, "arg_3": 3}
    assert op.inputnames == ["arg_0", "arg_1"]
    assert op.inputs == [graph.ops[0].outputs[0], graph.ops[1].outputs[0]]
    line = dumps(graph).splitlines()[4]
    assert "arg_2=0.25 arg_3=3 $arg_0=0 $arg_1=1" in line
