"""Parametrized modules (`torch.nn.utils.parametrizations.weight_norm` / `spectral_norm`, and
the legacy `torch.nn.utils.weight_norm` / `spectral_norm` hooks) are converted as the module
they compute: nn.Conv1d / nn.Linear with the computed weight, through the Python API, `.pt`
and `.pt2`."""
from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
from torch.nn.utils import parametrizations

from converter_helpers import types
from pnnx_reference import api
from pnnx_reference.cli import main as cli_main
from pnnx_reference.formats import pnnx_param

KINDS = {
    "weight_norm": lambda m, **kw: parametrizations.weight_norm(m, **kw),
    "spectral_norm": lambda m, **kw: parametrizations.spectral_norm(m),
    "legacy_weight_norm": lambda m, **kw: nn.utils.weight_norm(m, **kw),
    "legacy_spectral_norm": lambda m, **kw: nn.utils.spectral_norm(m),
}


class ConvThenLinear(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # the legacy hooks are deprecated
            self.conv = KINDS[kind](nn.Conv1d(4, 6, 3, padding=1, groups=2), dim=2)  # HuBERT's
            self.fc = KINDS[kind](nn.Linear(6, 5))

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).transpose(1, 2))


def _model(kind: str) -> nn.Module:
    model = ConvThenLinear(kind).eval()
    with torch.no_grad():
        model(torch.rand(1, 4, 8))  # spectral norm's estimate as a trained model would hold it
    return model


def _check(graph, model: nn.Module) -> None:
    assert types(graph) == ["pnnx.Input", "nn.Conv1d", "torch.relu", "Tensor.transpose" if "Tensor.transpose"
                            in types(graph) else "torch.transpose", "nn.Linear", "pnnx.Output"]
    conv, fc = (op for op in graph.ops if op.type in ("nn.Conv1d", "nn.Linear"))
    assert sorted(conv.attrs) == sorted(fc.attrs) == ["bias", "weight"]
    assert conv.params["groups"] == 2 and conv.params["padding"] == [1]
    torch.testing.assert_close(conv.attrs["weight"].to_torch(), model.conv.weight.detach(), rtol=0, atol=0)
    torch.testing.assert_close(fc.attrs["weight"].to_torch(), model.fc.weight.detach(), rtol=0, atol=0)


@pytest.mark.parametrize("kind", KINDS)
def test_the_python_api_converts_the_module_computed(tmp_path, kind):
    model, x = _model(kind), torch.rand(1, 4, 8)
    result = api.export(model, (x,), tmp_path, "m", fp16=False)
    assert result.self_check.startswith("passed") and not result.unsupported
    _check(result.graph, model)


@pytest.mark.parametrize("kind", ["weight_norm", "legacy_spectral_norm"])
@pytest.mark.parametrize("door", [".pt", ".pt2"])
def test_the_file_doors_convert_the_module_computed(tmp_path, kind, door):
    model, x = _model(kind), torch.rand(1, 4, 8)
    path = tmp_path / f"m{door}"
    if door == ".pt":
        torch.jit.trace(model, (x,)).save(str(path))
    else:
        torch.export.save(torch.export.export(model, (x,)), str(path))
    assert cli_main([str(path), "fp16=0", *(["inputshape=[1,4,8]"] if door == ".pt" else [])]) == 0
    _check(pnnx_param.load(tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin"), model)
