import pytest
import torch
import torch.nn as nn

from converter_helpers import check_links, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import fuse_batchnorm


def _randomised(bn):
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(-1, 1)
    bn.bias.data.uniform_(-1, 1)
    return bn


@pytest.mark.parametrize("bias", [True, False])
def test_conv_batchnorm_fuses_to_the_same_numbers(bias):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3, bias=bias), _randomised(nn.BatchNorm2d(6))).eval()
    graph = trace(model, torch.rand(1, 3, 8, 8)).graph
    assert fuse_batchnorm.run(graph) is True
    assert types(graph) == ["pnnx.Input", "nn.Conv2d", "pnnx.Output"]
    check_links(graph)
    conv = graph.ops[1]
    assert conv.params["bias"] is True
    fused = nn.Conv2d(3, 6, 3)
    fused.weight.data = conv.attrs["weight"].to_torch()
    fused.bias.data = conv.attrs["bias"].to_torch()
    x = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), model(x), rtol=1e-5, atol=1e-5)


def test_linear_batchnorm1d_fuses():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 5), _randomised(nn.BatchNorm1d(5))).eval()
    graph = trace(model, torch.rand(3, 4)).graph
    assert fuse_batchnorm.run(graph) is True
    linear = nn.Linear(4, 5)
    linear.weight.data = graph.ops[1].attrs["weight"].to_torch()
    linear.bias.data = graph.ops[1].attrs["bias"].to_torch()
    x = torch.rand(3, 4)
    with torch.no_grad():
        torch.testing.assert_close(linear(x), model(x), rtol=1e-5, atol=1e-5)


def test_conv_output_used_twice_is_not_fused():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4)

        def forward(self, x):
            y = self.conv(x)
            return self.bn(y), y

    graph = trace(Two().eval(), torch.rand(1, 3, 4, 4)).graph
    assert fuse_batchnorm.run(graph) is False
    assert "nn.BatchNorm2d" in types(graph)


def test_the_fused_weight_costs_one_float64_copy(monkeypatch):
    """Issue 32 (peak memory): the weight is read straight into float64 and scaled in place;
    no copy in its own dtype first (to_torch) and no second float64 product. A large layer's
    temporaries stay in the process's memory after the pass (+94 MB on resnet18, now +60)."""
    from pnnx_reference.ir import Attribute

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 6, 3), _randomised(nn.BatchNorm2d(6))).eval()
    graph = trace(model, torch.rand(1, 3, 8, 8)).graph
    weight = graph.ops[1].attrs["weight"]
    copied = []
    to_torch = Attribute.to_torch
    monkeypatch.setattr(Attribute, "to_torch", lambda self: copied.append(self is weight) or to_torch(self))
    products = []
    mul = torch.Tensor.mul
    monkeypatch.setattr(torch.Tensor, "mul", lambda self, *a, **k: products.append(self.shape) or mul(self, *a, **k))
    monkeypatch.setattr(torch.Tensor, "__mul__", lambda self, other: products.append(self.shape) or mul(self, other))
    assert fuse_batchnorm.run(graph) is True
    assert not any(copied) and (6, 3, 3, 3) not in products
    fused = nn.Conv2d(3, 6, 3)
    fused.weight.data, fused.bias.data = (graph.ops[1].attrs[k].to_torch() for k in ("weight", "bias"))
    x = torch.rand(2, 3, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), model(x), rtol=1e-5, atol=1e-5)
