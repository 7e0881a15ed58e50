"""Whole torchvision networks (random weights, fixed seed) through capture and `_pnnx.py`:
bit for bit at optlevel 1; optlevel 2 folds batchnorm into convolutions, which changes the
rounding, so there only closeness is required."""
from __future__ import annotations

import pytest
import torch

from pnnx_reference import api
from pycodegen_helpers import assert_bitwise, generate, run_generated

torchvision = pytest.importorskip("torchvision")
pytestmark = pytest.mark.slow

NETWORKS = ["resnet18", "mobilenet_v2", "shufflenet_v2_x1_0"]


@pytest.mark.parametrize("name", NETWORKS)
def test_network_round_trips(tmp_path, name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.rand(1, 3, 224, 224)
    with torch.no_grad():
        expected = model(x)
    py = generate(api.capture(model, (x,), optlevel=1), tmp_path / "o1", name=name)
    assert_bitwise(run_generated(py, x), (expected,))
    py = generate(api.capture(model, (x,), optlevel=2), tmp_path / "o2", name=name)
    (fused,) = run_generated(py, x)
    torch.testing.assert_close(fused, expected, atol=1e-4, rtol=1e-4)
