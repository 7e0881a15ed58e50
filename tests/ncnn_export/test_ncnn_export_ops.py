"""Every lowered operator family: the export loads in ncnn and matches torch on CPU (fp32
options and ncnn's defaults) and on Vulkan. Graphs are upstream pnnx's (fixtures/), the
modules are rebuilt from the same seed, weights and inputs are exact in fp16."""
from __future__ import annotations

import ncnn
import pytest

from ncnn_export_cases import CASES, build
from ncnn_export_helpers import FP32, LOW_PRECISION, assert_outputs_match, exported, run_ncnn, torch_outputs

# transcendental chains and resampling accumulate a few fp32 ulps more than the default
LOOSER_FP32 = {"expr_unary": dict(atol=5e-4, rtol=1e-3), "interpolate_bicubic": dict(atol=5e-4, rtol=1e-3),
               "logsumexp": dict(atol=5e-4, rtol=1e-3), "act_gelu": dict(atol=5e-4, rtol=1e-3)}
NAMES = sorted(CASES)


def _check(name: str, mode: str, tol: dict) -> None:
    model, inputs = build(name)
    expected = torch_outputs(model, inputs)
    got = run_ncnn(exported(name), inputs, len(expected), mode)
    assert_outputs_match(got, expected, tol, f"{name} [{mode}]")


@pytest.mark.parametrize("name", NAMES)
def test_ncnn_cpu_fp32(name):
    _check(name, "fp32", LOOSER_FP32.get(name, FP32))


@pytest.mark.parametrize("name", NAMES)
def test_ncnn_cpu_default_options(name):
    _check(name, "default", LOW_PRECISION)


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", NAMES)
def test_ncnn_vulkan(name):
    _check(name, "vulkan", LOW_PRECISION)
