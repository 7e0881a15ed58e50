"""Operators lowered as chains of ncnn layers (arithmetic.py formulas in their families): softsign, tanhshrink,
softplus with beta/threshold,
softmin, positive, eval-mode rrelu, threshold, addcmul/addcdiv, var/std (+ _mean), Lp pooling,
cosine similarity and pairwise distance. Each small module is captured, lowered, run in ncnn
(CPU fp32; a few on Vulkan) and compared with torch."""
from __future__ import annotations


import ncnn
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator


def _x(*shape, low=-3.0, high=3.0, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.rand(*shape, generator=g) * (high - low) + low


X4, X3 = (1, 6, 7, 9), (1, 5, 16)

# name: (module, inputs)
CASES = {
    "F.softsign": (Fn(F.softsign), [_x(*X4)]),
    "nn.Softsign": (nn.Softsign(), [_x(*X3)]),
    "F.tanhshrink": (Fn(F.tanhshrink), [_x(*X4)]),
    "nn.Tanhshrink": (nn.Tanhshrink(), [_x(*X3)]),
    "F.softmin_d2": (Fn(lambda x: F.softmin(x, dim=2)), [_x(*X4)]),
    "nn.Softmin_m1": (nn.Softmin(dim=-1), [_x(*X3)]),
    "torch.positive": (Fn(lambda x: torch.positive(x) * 2), [_x(*X4)]),
    "F.rrelu": (Fn(lambda x: F.rrelu(x, 0.1, 0.3)), [_x(*X4)]),
    "F.rrelu_": (Fn(lambda x: F.rrelu_(x * 1.0, 0.05, 0.25)), [_x(*X3)]),
    "nn.RReLU": (nn.RReLU(0.2, 0.4), [_x(*X3)]),
    # inputs on the threshold itself must give `value` (torch keeps only x > threshold)
    "F.threshold": (Fn(lambda x: F.threshold(x, 0.5, 2.0)),
                    [torch.cat([_x(1, 6, 6, 9), torch.full((1, 6, 1, 9), 0.5)], 2)]),
    "F.threshold_": (Fn(lambda x: F.threshold_(x * 1.0, -0.5, 3.0)), [_x(*X3)]),
    "nn.Threshold_v0": (nn.Threshold(0.1, 0.0), [_x(*X3)]),
    # beta and threshold (issue 34): both branches, and beta * x past exp's overflow at 88
    "F.softplus_beta_threshold": (Fn(lambda x: F.softplus(x, beta=2.0, threshold=3.0)), [_x(*X4, low=-4, high=4)]),
    "nn.Softplus_beta": (nn.Softplus(beta=0.5), [_x(*X3, low=-60, high=60)]),
    "nn.Softplus_threshold_past_overflow": (nn.Softplus(beta=1.0, threshold=100.0), [_x(*X3, low=-5, high=95)]),
    "torch.addcmul_bcast": (Fn(lambda a, b, c: torch.addcmul(a, b, c, value=-0.5)),
                            [_x(*X4), _x(1, 6, 1, 9), _x(1, 1, 7, 9)]),
    "torch.addcmul_default": (Fn(torch.addcmul), [_x(*X3), _x(*X3, seed=1), _x(*X3, seed=2)]),
    "torch.addcdiv": (Fn(lambda a, b, c: torch.addcdiv(a, b, c, value=2.0)),
                      [_x(*X3), _x(*X3, seed=1), _x(*X3, low=0.5, high=2.0)]),
    "torch.var_d1": (Fn(lambda x: torch.var(x, dim=1)), [_x(*X4)]),
    "torch.var_all": (Fn(torch.var), [_x(*X4)]),
    "torch.std_tuple_keep_c2": (Fn(lambda x: torch.std(x, dim=(2, 3), keepdim=True, correction=2)), [_x(*X4)]),
    "torch.std_all_keep": (Fn(lambda x: torch.std(x, keepdim=True)), [_x(*X3)]),
    "torch.std_biased": (Fn(lambda x: torch.std(x, -1, unbiased=False)), [_x(*X3)]),
    "Tensor.std": (Fn(lambda x: x.std(dim=1)), [_x(*X4)]),
    "torch.var_mean_keep": (Fn(lambda x: torch.var_mean(x, dim=-1, keepdim=True)), [_x(*X4)]),
    "torch.var_mean_tuple": (Fn(lambda x: torch.var_mean(x, dim=(1, 2), correction=0)), [_x(*X4)]),
    "torch.std_mean": (Fn(lambda x: torch.std_mean(x, dim=2)), [_x(*X3)]),
    "F.lp_pool2d_p2": (Fn(lambda x: F.lp_pool2d(x, 2.0, 2)), [_x(*X4)]),
    "F.lp_pool2d_p2_b2": (Fn(lambda x: F.lp_pool2d(x, 2.0, 2)), [_x(2, 6, 7, 9)]),  # the batch in the Mat
    "F.lp_pool1d_p3_ceil": (Fn(lambda x: F.lp_pool1d(x, 3.0, 3, stride=2, ceil_mode=True)),
                            [_x(*X3, low=0.0, high=1.0)]),
    "nn.LPPool2d_p1.5": (nn.LPPool2d(1.5, (2, 3)), [_x(*X4, low=0.1, high=1.0)]),
    "nn.LPPool1d_p1": (nn.LPPool1d(1, 2), [_x(*X3)]),
    "nn.LPPool2d_p4": (nn.LPPool2d(4, 3, stride=1), [_x(*X4)]),
    "F.lp_pool2d_inf": (Fn(lambda x: F.lp_pool2d(x, float("inf"), 2)), [_x(*X4)]),
    "F.lp_pool3d": (Fn(lambda x: F.lp_pool3d(x, 2.0, 2)), [_x(1, 3, 4, 6, 6)]),
    # all-zero windows: torch gives 0, ncnn's pow would give garbage without the clamp
    "F.lp_pool2d_zero_windows": (Fn(lambda x: F.lp_pool2d(torch.relu(x), 3.0, 2)), [_x(*X4, low=-3.0, high=0.5)]),
    "F.cosine_similarity": (Fn(lambda a, b: F.cosine_similarity(a, b, dim=1)), [_x(*X4), _x(*X4, seed=1)]),
    "nn.CosineSimilarity_eps": (nn.CosineSimilarity(dim=-1, eps=0.5), [_x(*X3, low=-0.05, high=0.05), _x(*X3, seed=1)]),
    # x2 broadcast along dim: torch expands it before taking its norm
    "F.cosine_similarity_bcast_dim": (Fn(lambda a, b: F.cosine_similarity(a, b, dim=1)), [_x(*X4), _x(1, 1, 7, 9)]),
    "F.pairwise_distance": (Fn(F.pairwise_distance), [_x(*X3), _x(*X3, seed=1)]),
    "nn.PairwiseDistance_p3_keep": (nn.PairwiseDistance(p=3.0, eps=0.1, keepdim=True), [_x(*X3), _x(*X3, seed=1)]),
    "nn.PairwiseDistance_p1_bcast": (nn.PairwiseDistance(p=1.0), [_x(*X4), _x(1, 1, 7, 9)]),
    "F.pairwise_distance_inf": (Fn(lambda a, b: F.pairwise_distance(a, b, p=float("inf"))), [_x(*X3), _x(*X3, seed=1)]),
    "F.pairwise_distance_p1.5": (Fn(lambda a, b: F.pairwise_distance(a, b, p=1.5)), [_x(*X3), _x(*X3, seed=1)]),
}


def _export(tmp_path, model, inputs):
    graph = capture(model.eval(), tuple(inputs))
    base = tmp_path / "m"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    return base


def _check(tmp_path, name: str, mode: str, tol: dict) -> None:
    model, inputs = CASES[name]
    expected = torch_outputs(model.eval(), inputs)
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    # a 0-d result (full reduction) comes back as a 1-element blob
    got = [g.reshape(()) if e.ndim == 0 and g.size == 1 else g for g, e in zip(got, expected)]
    assert_close(got, expected, tol, f"{name} [{mode}]")


@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_matches_torch_on_ncnn_cpu(tmp_path, name):
    _check(tmp_path, name, "fp32", FP32)


def test_threshold_is_strictly_greater(tmp_path):
    """ncnn Threshold and torch agree on x == threshold: it takes `value`."""
    model, x = Fn(lambda x: F.threshold(x, 0.5, -7.0)), torch.tensor([0.5, 0.49, 0.51, 3.0]).reshape(1, 1, 4)
    got = run_ncnn(_export(tmp_path, model, [x]), [x])[0]
    assert got.reshape(-1).tolist() == pytest.approx([-7.0, -7.0, 0.51, 3.0])


@pytest.mark.parametrize("fn, shape, reason", [
    (lambda x: F.rrelu(x, 0.1, 0.3, training=True), X3, "training=True"),
    (lambda x: F.lp_pool2d(x, -1.0, 2), X4, "norm_type=-1.0"),
    (lambda x: torch.var(x, dim=1, correction=6), X3, "divides by <= 0"),
])
@pytest.mark.filterwarnings("ignore:var\\(\\)")
def test_refusals_name_the_reason(tmp_path, fn, shape, reason):
    with pytest.raises(UnsupportedOperator, match=reason):
        _export(tmp_path, Fn(fn), [_x(*shape)])


VULKAN = ["F.softsign", "torch.var_mean_keep", "F.lp_pool2d_p2", "F.threshold", "F.cosine_similarity"]


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", VULKAN)
def test_composite_matches_torch_on_ncnn_vulkan(tmp_path, name):
    _check(tmp_path, name, "vulkan", LOW_PRECISION)
