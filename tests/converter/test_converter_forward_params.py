"""nn leaf modules whose forward takes non-tensor arguments: recorded as params, passed back
at the call in `_pnnx.py` (not to the constructor), bitwise equal to eager."""
import pytest
import torch
import torch.nn as nn

from converter_helpers import op_of
from script_modules import import_file
from pnnx_reference import api
from pnnx_reference.emit import write_python
from pnnx_reference.formats import pnnx_param


class Unpool(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, 2, 1, return_indices=True)
        self.unpool = nn.MaxUnpool2d(3, 2, 1)

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i, output_size=x.shape[-2:])


class Attention(nn.Module):
    def __init__(self, **call):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.call = call

    def forward(self, x):
        return self.attn(x, x, x, **self.call)[0]


def _generated(tmp_path, model, x):
    graph = api.capture(model, [x])
    bin_ = tmp_path / "m.pnnx.bin"
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", bin_)
    write_python(graph, tmp_path / "m_pnnx.py", bin_)
    net = import_file(tmp_path / "m_pnnx.py", f"forward_params_{tmp_path.name}").Model().eval()
    with torch.no_grad():
        assert torch.equal(net(x), model(x))
    return graph, (tmp_path / "m_pnnx.py").read_text()


def test_max_unpool_output_size(tmp_path):
    graph, source = _generated(tmp_path, Unpool().eval(), torch.rand(1, 2, 7, 9))
    assert op_of(graph, "nn.MaxUnpool2d").params["output_size"] == [7, 9]
    assert "output_size=(7, 9))" in source and "nn.MaxUnpool2d(" in source
    assert "output_size" not in [line for line in source.splitlines() if "nn.MaxUnpool2d(" in line][0]


@pytest.mark.parametrize("call, params", [
    ({}, {}),
    ({"need_weights": False}, {"need_weights": False}),
    ({"average_attn_weights": False}, {"average_attn_weights": False}),
])
def test_attention_call_flags(tmp_path, call, params):
    torch.manual_seed(0)
    graph, _ = _generated(tmp_path, Attention(**call).eval(), torch.rand(2, 5, 8))
    op = op_of(graph, "nn.MultiheadAttention")
    assert {k: op.params[k] for k in ("need_weights", "average_attn_weights") if k in op.params} == params
