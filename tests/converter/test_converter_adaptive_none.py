"""Adaptive pooling with `output_size=(None, k)`: None is written as 0 (as upstream does) and
the generated code turns it back into None, for both the module and the function."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from script_modules import import_file
from pnnx_reference import api
from pnnx_reference.emit import regenerate
from pnnx_reference.formats import pnnx_param


class Functional(nn.Module):
    def forward(self, x):
        return F.adaptive_max_pool2d(x, (None, 3))


@pytest.mark.parametrize("model, op_type", [(nn.AdaptiveAvgPool2d((None, 2)), "nn.AdaptiveAvgPool2d"),
                                            (Functional(), "F.adaptive_max_pool2d")])
def test_none_output_size_round_trips(tmp_path, model, op_type):
    x = torch.rand(1, 3, 7, 8)
    graph = api.capture(model, [x])
    op = [o for o in graph.ops if o.type == op_type][0]
    assert op.params["output_size"][0] == 0
    param = tmp_path / "m.pnnx.param"
    pnnx_param.save(graph, param, tmp_path / "m.pnnx.bin")
    py = regenerate(param)
    net = import_file(py, f"adaptive_none_{op_type}").Model().eval()
    assert torch.equal(net(x), model(x))
