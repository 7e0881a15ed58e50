"""Every lowered operator family: the export loads in ncnn and matches torch on CPU (fp32
options and ncnn's defaults) and on Vulkan. The graphs come from our capture (every case)
and from upstream pnnx (the stored fixtures/, a subset); weights and inputs are exact in fp16."""
from __future__ import annotations

import ncnn
import pytest

from ncnn_export_cases import CASES, build
from ncnn_export_helpers import (FP32, LOW_PRECISION, assert_outputs_match, exported, run_ncnn,
                                 torch_outputs, upstream_cases)

# transcendental chains and resampling accumulate a few fp32 ulps more than the default
LOOSER_FP32 = {"expr_unary": dict(atol=5e-4, rtol=1e-3), "interpolate_bicubic": dict(atol=5e-4, rtol=1e-3),
               "logsumexp": dict(atol=5e-4, rtol=1e-3), "act_gelu": dict(atol=5e-4, rtol=1e-3)}
NAMES = sorted(CASES)
UPSTREAM = upstream_cases()


def _check(name: str, mode: str, tol: dict, source: str = "ours") -> None:
    model, inputs = build(name)
    expected = torch_outputs(model, inputs)
    got = run_ncnn(exported(name, source), inputs, len(expected), mode)
    assert_outputs_match(got, expected, tol, f"{name} [{mode}, {source} graph]")


@pytest.mark.parametrize("name", NAMES)
def test_ncnn_cpu_fp32(name):
    _check(name, "fp32", LOOSER_FP32.get(name, FP32))


@pytest.mark.parametrize("name", NAMES)
def test_ncnn_cpu_default_options(name):
    _check(name, "default", LOW_PRECISION)


# Vulkan pipelines take seconds each on lavapipe: a few cases per family by default, the rest slow
VULKAN_QUICK = {"conv2d", "conv2d_depthwise_relu", "conv1d", "conv3d", "convtranspose2d", "linear",
                "linear_3d", "matmul", "embedding", "batchnorm2d", "layernorm", "groupnorm",
                "instancenorm2d", "act_hardswish", "act_prelu", "softmax", "maxpool2d", "avgpool1d",
                "global_avgpool_flatten", "upsample_bilinear", "pixelshuffle", "zeropad2d", "permute4",
                "view", "cat", "chunk", "select", "mean_hw", "expr_broadcast_rank", "expr_const",
                "expr_unary", "block"}
VULKAN_CASES = [pytest.param(n, marks=[] if n in VULKAN_QUICK else [pytest.mark.slow]) for n in NAMES]


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", VULKAN_CASES)
def test_ncnn_vulkan(name):
    _check(name, "vulkan", LOW_PRECISION)


@pytest.mark.parametrize("name", UPSTREAM)
def test_ncnn_from_upstream_graph(name):
    """The same lowering fed upstream pnnx's graph of the same module."""
    _check(name, "fp32", LOOSER_FP32.get(name, FP32), source="upstream")
