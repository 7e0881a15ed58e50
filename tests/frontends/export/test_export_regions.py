"""Wrapped regions of an exported program that compute what their body computes (a no_grad
block, autocast disabled as transformers' rotary embeddings write it) are inlined; the user's
program is left as it was; autocast to another dtype stays refused."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_backend, tolerance
from pnnx_reference import api
from pnnx_reference.errors import PnnxError


class Regions(nn.Module):
    def __init__(self, autocast: bool = False) -> None:
        super().__init__()
        self.linear, self.autocast = nn.Linear(8, 8), autocast

    def forward(self, x):
        with torch.no_grad():
            y = torch.sin(x) * 2
        with torch.autocast(device_type="cpu", enabled=self.autocast, dtype=torch.bfloat16):
            z = self.linear(y).float().cos()
        return z + x


def _wrapped(program) -> list[str]:
    return [str(n.target) for n in program.graph_module.graph.nodes if "wrap_with" in str(n.target)]


def test_grad_and_disabled_autocast_regions_are_inlined(tmp_path):
    model, x = Regions().eval(), torch.randn(2, 8)
    program = torch.export.export(model, (x,))
    assert len(_wrapped(program)) == 2  # what torch.export writes for these blocks
    result = api.export(program, None, tmp_path, "net")
    assert len(_wrapped(program)) == 2  # the user's program is not edited
    got = run_backend("pnnx-python", {"pnnx.param": result.paths["pnnxparam"], "pnnx.bin": result.paths["pnnxbin"],
                                      "pnnx.py": result.paths["pnnxpy"]}, [x])
    with torch.no_grad():
        assert_close(got, [model(x)], tolerance(1e-5, 1e-5, "fp32 reference"))


def test_autocast_to_another_dtype_is_refused(tmp_path):
    model, x = Regions(autocast=True).eval(), torch.randn(2, 8)
    program = torch.export.export(model, (x,))
    with pytest.raises(PnnxError, match="wrap_with_autocast"):
        api.export(program, None, tmp_path, "net")
