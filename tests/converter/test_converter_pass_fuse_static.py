"""fuse_static: F.linear / F.conv* with constant weights become nn.Linear / nn.Conv* (optlevel 2)
named as the generated code's attribute (`F.conv1d_0` -> `F_conv1d_0`), bitwise equal after
regeneration; dynamic weights stay functional."""
import pytest
import torch
import torch.nn.functional as F

from converter_helpers import op_of, types
from script_modules import import_file
from pnnx_reference import api
from pnnx_reference.emit import write_python
from pnnx_reference.formats import pnnx_param


class Static(torch.nn.Module):
    def __init__(self, fn, **tensors):
        super().__init__()
        self.fn = fn
        for name, t in tensors.items():
            self.register_parameter(name, torch.nn.Parameter(t))

    def forward(self, x):
        return self.fn(self, x)


CASES = {
    "linear": (lambda s, x: F.linear(x, s.w, s.b), dict(w=torch.rand(5, 8), b=torch.rand(5)), (2, 8),
               "nn.Linear", {"bias": True, "in_features": 8, "out_features": 5}),
    "linear_nobias": (lambda s, x: F.linear(x, s.w), dict(w=torch.rand(5, 8)), (2, 8),
                      "nn.Linear", {"bias": False, "in_features": 8, "out_features": 5}),
    "conv2d": (lambda s, x: F.conv2d(x, s.w, s.b, stride=2, padding=1, groups=2),
               dict(w=torch.rand(6, 2, 3, 3), b=torch.rand(6)), (1, 4, 9, 9), "nn.Conv2d",
               {"in_channels": 4, "out_channels": 6, "kernel_size": [3, 3], "groups": 2, "bias": True}),
    "conv1d": (lambda s, x: F.conv1d(x, s.w), dict(w=torch.rand(3, 4, 2)), (1, 4, 7), "nn.Conv1d",
               {"in_channels": 4, "out_channels": 3, "kernel_size": [2], "bias": False}),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_static_weights_become_modules(tmp_path, key):
    fn, tensors, shape, module, params = CASES[key]
    model, x = Static(fn, **tensors).eval(), torch.rand(shape)
    graph = api.capture(model, [x])
    op = op_of(graph, module)
    assert op.name == f"F_{key.split('_')[0]}_0" and "pnnx.Attribute" not in types(graph)
    assert {k: op.params[k] for k in params} == params and set(op.attrs) == {"weight"} | ({"bias"} if "b" in tensors else set())
    bin_ = tmp_path / "m.pnnx.bin"
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", bin_)
    write_python(graph, tmp_path / "m_pnnx.py", bin_)
    net = import_file(tmp_path / "m_pnnx.py", f"fuse_static_{key}").Model().eval()
    with torch.no_grad():
        assert torch.equal(net(x), model(x))


def test_weight_from_an_input_stays_functional():
    class Dynamic(torch.nn.Module):
        def forward(self, x, w):
            return F.linear(x, w)

    graph = api.capture(Dynamic(), [torch.rand(2, 8), torch.rand(5, 8)])
    assert "F.linear" in types(graph) and "nn.Linear" not in types(graph)


def test_optlevel_1_keeps_the_function():
    fn, tensors, shape, _, _ = CASES["linear"]
    graph = api.capture(Static(fn, **tensors).eval(), [torch.rand(shape)], optlevel=1)
    assert "F.linear" in types(graph)
