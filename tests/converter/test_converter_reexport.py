"""Converting the generated `_pnnx.py` again gives the same pnnx.param (a fixed point), one
test per cause that once broke it: weight names, the name of a module made by fuse_static,
capture numbering counted ops that folding removed, and where a folded constant sits."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from script_modules import import_file
from pnnx_reference import api


def _param(model, inputs, folder):
    api.export(model, inputs, folder, "m")
    return (folder / "m.pnnx.param").read_text()


def _reexport(tmp_path, model, inputs):
    """(first pnnx.param, pnnx.param of the generated model converted again)."""
    first = _param(model.eval(), inputs, tmp_path / "a")
    generated = import_file(tmp_path / "a" / "m_pnnx.py", f"reexport_{tmp_path.name}").Model().eval()
    return first, _param(generated, inputs, tmp_path / "b")


class Conv(nn.Module):  # F.conv2d with parameters: fuse_static makes it nn.Conv2d
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(4, 3, 3, 3))
        self.b = nn.Parameter(torch.rand(4))

    def forward(self, x):
        return F.conv2d(x, self.w, self.b)


class Norm(nn.Module):  # parameters and buffers read by a function stay pnnx.Attribute
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(3))
        self.register_buffer("rm", torch.rand(3))
        self.register_buffer("rv", torch.rand(3) + 0.5)

    def forward(self, x):
        return F.batch_norm(x, self.rm, self.rv, self.w)


class FilledLater(nn.Module):  # a folded constant computed before an unrelated op
    def forward(self, x):
        return x.new_empty((2, 3)).fill_(1.5) + x.sum()


class ShapeOfInput(nn.Module):  # the shape expression folds away: numbering must not count it
    def forward(self, x):
        return torch.zeros(x.shape) + 1 + x


class Gru(nn.Module):  # a folded state read before the weights by the same call
    def __init__(self):
        super().__init__()
        self.w_ih, self.w_hh = nn.Parameter(torch.rand(24, 4)), nn.Parameter(torch.rand(24, 8))
        self.b_ih, self.b_hh = nn.Parameter(torch.rand(24)), nn.Parameter(torch.rand(24))

    def forward(self, x):
        h = torch.zeros(1, x.size(1), 8)
        y, _ = torch.gru(x, h, [self.w_ih, self.w_hh, self.b_ih, self.b_hh], True, 1, 0.0, False, False, False)
        return y


class Stack(nn.Module):  # leaf modules inside containers: named `m.layers.0`, `m.layers.1`
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                       enable_nested_tensor=False)

    def forward(self, x):
        return self.m(x)


class NestedWeights(nn.Module):  # weights of a submodule read by a function: `m.weight_ih_l0`
    def __init__(self):
        super().__init__()
        self.m = nn.GRU(4, 8)

    def forward(self, x):
        m = self.m
        return torch.gru(x, torch.zeros(1, x.size(1), 8), [m.weight_ih_l0, m.weight_hh_l0, m.bias_ih_l0,
                                                             m.bias_hh_l0], True, 1, 0.0, False, False, False)[0]


class FillSlice(nn.Module):  # `_pnnx.py` fills the view in place and then assigns it back
    def forward(self, x):
        y = x + 0.0
        y[:, 1:3].fill_(-1.0)
        return y


class Rotary(nn.Module):  # `q * cos` is read first, but its expression ends after rotate_half
    def __init__(self):
        super().__init__()
        self.register_buffer("cos", torch.rand(4, 8))
        self.register_buffer("sin", torch.rand(4, 8))

    def forward(self, q):
        return q * self.cos + torch.cat((-q[..., 4:], q[..., :4]), dim=-1) * self.sin


CASES = {
    "attribute_read_by_a_later_expression": (Rotary, [(1, 2, 4, 8)], "pnnx.Attribute           cos "),
    "nested_modules": (Stack, [(5, 2, 8)], "nn.TransformerEncoderLayer m.layers.1 "),
    "nested_weights": (NestedWeights, [(5, 2, 4)], "pnnx.Attribute           m.weight_hh_l0 "),
    "fill_a_slice": (FillSlice, [(2, 5, 4)], "Tensor.slice_copy        Tensor.slice_copy_2 "),
    "fused_conv": (Conv, [(1, 3, 6, 6)], "nn.Conv2d                F_conv2d_0 "),
    "weights": (Norm, [(2, 3, 4)], "pnnx.Attribute           rm "),
    "folded_position": (FilledLater, [(4, 4)], "pnnx.Attribute           pnnx_fold_"),
    "folded_numbering": (ShapeOfInput, [(2, 3)], "pnnx.Expression          pnnx_expr_0 "),
    "folded_among_weights": (Gru, [(5, 2, 4)], "torch.gru                torch.gru_0 "),
}


@pytest.mark.parametrize("key", sorted(CASES))
def test_reexport_is_a_fixed_point(tmp_path, key):
    cls, shapes, expected_line = CASES[key]
    torch.manual_seed(0)
    first, again = _reexport(tmp_path, cls(), [torch.rand(s) for s in shapes])
    assert expected_line in first
    assert again == first


def test_plain_tensor_attribute_is_named_by_its_path():
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.rand(3)  # neither parameter nor buffer

        def forward(self, x):
            return F.layer_norm(x, (3,), self.scale)

    graph = api.capture(Plain().eval(), [torch.rand(2, 3)])
    assert [op.name for op in graph.ops if op.type == "pnnx.Attribute"] == ["scale"]


@pytest.mark.parametrize("fn, shape", [
    (lambda x: torch.chunk(x, 1, 1)[0] * 2, (2, 3)),
    (lambda x: torch.meshgrid(x, indexing="ij")[0] * 2, (6,)),
    (lambda x: torch.unbind(x, 0)[0] * 2, (1, 3)),
    (lambda x: torch.split(x, 3, 1)[0] * 2, (2, 3)),
])
def test_a_sequence_call_with_one_result_unpacks_it(tmp_path, fn, shape):
    """torch.chunk(x, 1) and friends return a one-element sequence: `_pnnx.py` unpacks it
    (`v_1, = ...`) and the self-check passes."""
    class One(nn.Module):
        def forward(self, x):
            return fn(x)

    x = torch.rand(*shape)
    assert api.export(One(), (x,), tmp_path, "m").self_check.startswith("passed")
    assert ", = torch." in (tmp_path / "m_pnnx.py").read_text()
