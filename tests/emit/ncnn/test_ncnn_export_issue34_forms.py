"""Issue 34, the forms upstream lowers to ncnn that ours refused or got wrong: attention with
bool masks (SDPA's True means "takes part"), torch.clamp with tensor min/max, nn.MultiheadAttention with add_bias_kv /
add_zero_attn / kdim / vdim, channel shuffles of other ranks, einsum with an ellipsis,
torchvision's deformable convolution, in-place arithmetic on slices of slices. Each small
module is captured, lowered, run in ncnn (CPU fp32) and compared with torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, lowered, torch_outputs


def _x(*shape, seed=0):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed + sum(shape)))


Q, K, V = _x(1, 2, 5, 8), _x(1, 2, 6, 8, seed=1), _x(1, 2, 6, 8, seed=2)
KEEP = _x(5, 6, seed=3) > 0.3          # a constant bool mask: True where a score takes part
KEEP_HEADS = _x(2, 5, 6, seed=4) > 0.3


class First(nn.Module):
    """nn.MultiheadAttention's result without its attention weights (`y, _ = mha(q, k, v)`)."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module(*args)[0]


def _shuffle_split(x):
    """ShuffleNetV2's channel split: a rank-5 (2, N, C/2, H, W) view, then its two halves."""
    b, c, h, w = x.size()
    x = x.reshape(b * c // 2, 2, h * w).permute(1, 0, 2).reshape(2, -1, c // 2, h, w)
    return x[0], x[1]


CASES = {
    "torch.clamp_tensors": (Fn(lambda x, lo, hi: torch.clamp(x, lo, hi)), [_x(1, 3, 4), _x(1, 3, 1, seed=1) * 0.5,
                                                                           _x(1, 1, 4, seed=2) * 0.5 + 0.5]),
    "Tensor.clamp_min_tensor": (Fn(lambda x, lo: x.clamp(min=lo)), [_x(2, 3, 4), _x(3, 1, seed=1) * 0.5]),
    "torch.clamp_max_tensor": (Fn(lambda x, hi: torch.clamp(x, max=hi * 0.5)), [_x(2, 3, 4), _x(4, seed=1)]),
    "shuffle_split": (Fn(_shuffle_split), [_x(1, 24, 5, 6)]),
    "shuffle_split_batch2": (Fn(lambda x: [t * 2 for t in _shuffle_split(x)]), [_x(2, 12, 3, 4)]),
    "nn.ChannelShuffle_5d": (nn.ChannelShuffle(2), [_x(1, 4, 3, 5, 6)]),
    "nn.ChannelShuffle_5d_batch3": (nn.ChannelShuffle(3), [_x(3, 6, 2, 3, 4)]),
    "nn.ChannelShuffle_3d_groups3": (nn.ChannelShuffle(3), [_x(2, 6, 10)]),  # ncnn failed (-100) on (C, L)
    "sdpa_bool_mask": (Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=KEEP)), [Q, K, V]),
    "sdpa_bool_mask_heads_scale": (Fn(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=KEEP_HEADS, scale=0.7)), [Q, K, V]),
    "sdpa_bool_mask_computed": (Fn(lambda q, k, v, a: F.scaled_dot_product_attention(q, k, v, attn_mask=a > 0.2)),
                                [Q, K, V, _x(1, 2, 5, 6, seed=5)]),
    "sdpa_float_mask_input": (Fn(lambda q, k, v, a: F.scaled_dot_product_attention(q, k, v, attn_mask=a)),
                              [Q, K, V, _x(1, 2, 5, 6, seed=5)]),
    "sdpa_causal": (Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)), [Q, K, V]),
    "einsum_ellipsis_transpose": (Fn(lambda a: torch.einsum("...ij->...ji", a)), [_x(2, 3, 4, 5)]),
    "einsum_ellipsis_matmul": (Fn(lambda a, b: torch.einsum("...ij,...jk->...ik", a, b)),
                               [_x(2, 3, 4, 5), _x(2, 3, 5, 6, seed=1)]),
    "einsum_ellipsis_implicit": (Fn(lambda a, b: torch.einsum("i...j,jk", a, b)), [_x(4, 3, 5), _x(5, 2, seed=1)]),
    "einsum_ellipsis_fewer_dims": (Fn(lambda a, b: torch.einsum("...ij,...j->...i", a, b)),
                                   [_x(2, 3, 4, 5), _x(3, 5, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_form_matches_torch_on_ncnn_cpu(tmp_path, name):
    torch.manual_seed(0)
    model, inputs = CASES[name]
    expected = torch_outputs(model.eval(), [t.clone() for t in inputs])
    got = run_ncnn(lowered(tmp_path, model, inputs), inputs, "fp32")
    assert_close(got, expected, FP32, name)


def test_an_einsum_that_broadcasts_a_size_one_dim_is_refused(tmp_path):
    from pnnx_reference.errors import UnsupportedOperator

    model = Fn(lambda a, b: torch.einsum("...ij,...jk->...ik", a, b))
    with pytest.raises(UnsupportedOperator, match="does not broadcast"):
        lowered(tmp_path, model, [_x(2, 1, 4, 5), _x(2, 3, 5, 6)])


@pytest.mark.parametrize("name", ["torch.clamp_tensors", "Tensor.clamp_min_tensor", "torch.clamp_max_tensor"])
def test_clamp_by_tensors_in_pnnx_onnx(tmp_path, name):
    from conformance_runs import run_onnx
    from pnnx_reference.api import export

    model, inputs = CASES[name]
    expected = torch_outputs(model.eval(), inputs)
    result = export(model, tuple(inputs), tmp_path, "m")
    assert "onnx" not in result.unsupported and "ncnn" not in result.unsupported, result.unsupported
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), expected, FP32, name)
