"""torch.meshgrid (YOLO's anchor points when its inputs are not constants) in each emitter:
ncnn (Reshape + Tile per input) and ONNX (Reshape + Expand per input), through the harness's
parity check on the op cases, both indexings."""
from __future__ import annotations

import pytest

from conformance_runs import parity
from pnnx_conformance.checks import Executor

CASES = ["torch.meshgrid/ij", "torch.meshgrid/xy_three", "torch.meshgrid/anchor_grid"]


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    return Executor(tmp_path_factory.mktemp("meshgrid"), tier="full")


@pytest.mark.parametrize("backend, precision", [("ncnn-cpu", "fp32"), ("ncnn-cpu", "default"),
                                                ("onnxruntime", "fp32")])
@pytest.mark.parametrize("case_id", CASES)
def test_meshgrid_matches_torch(ex, case_id, backend, precision):
    parity(ex, case_id, backend, precision)
