"""The TorchScript frontend's pieces: nn module recovery, aten rules, prim structure."""
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from pnnx_reference.api import capture
from pnnx_reference.errors import ConversionError, ValueDependentWarning
from pnnx_reference.frontends.torchscript import rebuild
from pnnx_reference.frontends.torchscript.stdmodules import recover


def roundtrip(script):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.save(script, buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


def traced(model, *inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return roundtrip(torch.jit.trace(model.eval(), inputs, check_trace=False))


def types_of(graph):
    return [op.type for op in graph.ops if op.type not in ("pnnx.Input", "pnnx.Output")]


def expand(value, rank=2):
    """A traced graph only knows the expanded form: 2 and (2, 2) are the same argument."""
    return (value,) * rank if isinstance(value, int) and not isinstance(value, bool) else value


@pytest.mark.parametrize("module, shape", [
    (nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, bias=False), (1, 4, 9, 9)),
    (nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2), (1, 4, 5, 5)),
    (nn.Linear(5, 3), (2, 5)),
    (nn.LayerNorm([4, 5], eps=1e-3), (2, 4, 5)),
    (nn.GroupNorm(2, 4), (1, 4, 3, 3)),
    (nn.MaxPool2d(3, 2, 1, ceil_mode=True), (1, 2, 8, 8)),
    (nn.LeakyReLU(0.3), (2, 3)),
    (nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True), (1, 2, 3, 3)),
    (nn.GRU(4, 6, num_layers=2, bidirectional=True), (3, 1, 4)),
])
def test_recovered_module_matches_original(module, shape):
    torch.manual_seed(0)
    x = torch.rand(shape)
    script = traced(module, x)
    rebuilt = recover(script)
    assert type(rebuilt) is type(module)
    for name in ("stride", "padding", "groups", "eps", "normalized_shape", "negative_slope", "mode",
                 "num_layers", "bidirectional", "in_channels", "out_channels"):
        if hasattr(module, name):
            assert expand(getattr(rebuilt, name)) == expand(getattr(module, name)), name
    torch.testing.assert_close(rebuilt(x), module(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.act = nn.ReLU()
        self.scale = nn.Parameter(torch.rand(1, 4, 1, 1))

    def forward(self, x):
        y = self.act(self.conv(x))
        y = self.act(y * self.scale)          # a shared module: traced as forward1
        return torch.cat([y[:, 1:3], y.select(1, 0).unsqueeze(1)], 1) - 1


def test_user_module_replay_keeps_names_and_values():
    torch.manual_seed(0)
    model, x = Block(), torch.rand(1, 3, 5, 5)
    rebuilt = rebuild(traced(model, x))
    torch.testing.assert_close(rebuilt(x), model(x))
    graph = capture(rebuilt, (x,), optlevel=1)
    ops = {op.name: op.type for op in graph.ops}
    assert ops["conv"] == "nn.Conv2d" and "nn.ReLU" in ops.values()
    assert {"Tensor.select", "torch.cat", "pnnx.Expression"} <= set(ops.values())
    assert "scale" in ops  # the parameter keeps its path, as through the Python API


class ConvBnHardswish(nn.Sequential):
    """torchvision's Conv2dNormActivation: its activation is in-place by default."""

    def __init__(self):
        super().__init__(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, eps=1e-3), nn.Hardswish(inplace=True))
        self[1].running_mean.uniform_(-0.2, 0.2)
        self[1].running_var.uniform_(0.5, 1.5)


def test_an_in_place_submodule_runs_once_in_the_replay():
    """Matching a recovered module's arguments probes it on copies: probed on the real tensors,
    an in-place activation was applied twice, and the capture's values (the self-check's
    expected outputs) were wrong for mobilenet_v3 and efficientnet."""
    torch.manual_seed(0)
    model, x = nn.Sequential(ConvBnHardswish(), nn.Conv2d(4, 2, 1)), torch.rand(1, 3, 8, 8) * 4 - 2
    with torch.no_grad():
        expected = model.eval()(x.clone())
        rebuilt = rebuild(traced(model, x.clone()))
        torch.testing.assert_close(rebuilt(x.clone()), expected)


class Shapes(nn.Module):
    def forward(self, x):
        return F.gelu(x.view(x.size(0), -1)), torch.atan2(x, x + 1), torch.where(x > 0.5, x, -x)


def test_aten_rules_follow_the_python_api():
    x = torch.rand(2, 3, 4)
    graph = capture(rebuild(traced(Shapes(), x)), (x,), optlevel=1)
    kinds = types_of(graph)
    assert "F.gelu" in kinds and "Tensor.view" in kinds and "torch.where" in kinds
    assert not any(k.startswith("aten") for k in kinds)


class Scripted(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if x.sum() > 0:
            x = self.fc(x)
        for _ in range(2):
            x = x * 2
        return x


def test_scripted_module_with_control_flow():
    """`if x.sum() > 0:` in a scripted model is value-dependent: refused by default, naming the
    TorchScript node and its source; followed for the example when allowed."""
    torch.manual_seed(0)
    model, x = Scripted().eval(), torch.rand(2, 4)
    script = roundtrip(torch.jit.script(model))
    rebuilt = rebuild(script)
    torch.testing.assert_close(rebuilt(x), model(x))
    with pytest.raises(ConversionError, match=r"TorchScript aten::Bool from .*value-dependent"):
        capture(rebuilt, (x,), optlevel=1)
    with pytest.warns(ValueDependentWarning):
        assert "nn.Linear" in types_of(capture(rebuilt, (x,), optlevel=1, allow_value_dependent=True))


def test_multi_input_module_gets_python_argument_order():
    torch.manual_seed(0)
    cell, x, h = nn.RNNCell(4, 8), torch.rand(2, 4), torch.rand(2, 8)

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = cell

        def forward(self, a, b):
            return self.cell(a, b)

    rebuilt = rebuild(traced(Wrap(), x, h))
    torch.testing.assert_close(rebuilt(x, h), cell(x, h))


def test_unknown_operator_is_a_conversion_error():
    from pnnx_reference.errors import ConversionError

    class Weird(nn.Module):
        def forward(self, x):
            return torch.ops.aten._fake_quantize_learnable_per_tensor_affine(x, torch.ones(1),
                                                                            torch.zeros(1), 0, 255)
    x = torch.rand(4)
    rebuilt = rebuild(traced(Weird(), x))
    with pytest.raises(ConversionError, match="_fake_quantize_learnable_per_tensor_affine"):
        capture(rebuilt, (x,))
