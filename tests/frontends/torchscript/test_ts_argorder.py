"""The argument-order probes of recovered modules (frontends/torchscript/argorder.py): a call
only one order fits goes unprobed in a capture, which is then checked against the original
script as a whole; a difference captures again with every call probed."""
import io
import warnings

import pytest
import torch
import torch.nn as nn

from pnnx_reference import api
from pnnx_reference.frontends.torchscript import argorder, rebuild, stdmodules


def traced(model, *inputs):
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.save(torch.jit.trace(model.eval(), inputs, check_trace=False), buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.LeakyReLU(0.2)
        self.cell = nn.RNNCell(4, 6)

    def forward(self, x, h):
        y = self.act(self.conv(x)).mean(dim=(2, 3))
        return self.cell(y, h)


def inputs():
    torch.manual_seed(0)
    return torch.rand(2, 3, 5, 5) * 2 - 1, torch.rand(2, 6)


@pytest.fixture
def probed(monkeypatch):
    """The types of the modules whose calls were probed."""
    seen = []
    calls = argorder._calls

    def counting(module, script, args):
        seen.append(type(module))
        return calls(module, script, args)

    monkeypatch.setattr(argorder, "_calls", counting)
    return seen


def captured(model, x, h):
    rebuilt = rebuild(traced(model, x, h))
    got = api._checked_trace(rebuilt, (x, h), [x.clone(), h.clone()])
    return api._compared_outputs(got)


def test_only_ambiguous_calls_are_probed(probed):
    """The conv and the activation take one tensor: one order only, no probe; the cell takes
    (input, state), which tracing may have swapped: probed."""
    model, (x, h) = Net(), inputs()
    (out,) = captured(model, x, h)
    assert probed == [nn.RNNCell]
    torch.testing.assert_close(out, model(x, h))


def test_a_misread_module_is_caught_by_the_whole_model_check(monkeypatch, probed):
    """A constructor argument misread (the slope, here by design) goes unseen by the unprobed
    capture; the whole model's result then differs from the script's, and the second capture
    probes the activation, finds no order that reproduces it, and replays its graph."""
    read = stdmodules.constructor_args

    def misread(cls, script):
        kwargs = read(cls, script)
        return {**kwargs, "negative_slope": 0.5} if cls is nn.LeakyReLU else kwargs

    monkeypatch.setattr(stdmodules, "constructor_args", misread)
    model, (x, h) = Net(), inputs()
    (out,) = captured(model, x, h)
    assert nn.LeakyReLU in probed and probed.count(nn.RNNCell) == 2  # both captures probed it
    torch.testing.assert_close(out, model(x, h))


def test_outside_a_checked_capture_every_call_is_probed(probed):
    """A rebuilt module called directly (torchscript.load) has no whole-model check: its
    recovered modules are probed as before."""
    model, (x, h) = Net(), inputs()
    rebuilt = rebuild(traced(model, x, h))
    torch.testing.assert_close(rebuilt(x, h), model(x, h))
    assert sorted(t.__name__ for t in probed) == ["Conv2d", "LeakyReLU", "RNNCell"]

