"""Unbatched inputs ((C, L) to Conv1d, (C, H, W) to Conv2d, ...): torch computes a batch of
one; the ONNX writer wraps the batched node in Unsqueeze(axes=[0]) ... Squeeze(axes=[0]).
Each module is captured, exported, checked (checker + strict shape inference), run in
onnxruntime and compared with torch."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn
from onnx_export_util import assert_close, export_module, op_types
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import build_model
from pnnx_reference.errors import UnsupportedOperator


class Pair(nn.Module):
    """A pooling module returning (values, indices)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y, i = self.m(x)
        return y, i


class PoolUnpool(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pool = getattr(nn, f"MaxPool{n}d")(2, return_indices=True)
        self.unpool = getattr(nn, f"MaxUnpool{n}d")(2)

    def forward(self, x):
        y, i = self.pool(x)
        return y, i, self.unpool(y * 2.0, i)


class Attend(nn.Module):
    """nn.MultiheadAttention called on (query, key, value), returning both outputs."""

    def __init__(self, average=True, **kw):
        super().__init__()
        self.m, self.average = nn.MultiheadAttention(8, 2, **kw), average

    def forward(self, q, kv):
        return self.m(q, kv, kv, average_attn_weights=self.average)


class SelfAttend(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, **kw)

    def forward(self, x):
        return self.m(x, x, x, need_weights=False)[0]


def _running_stats(m):
    m.running_mean.uniform_(-1, 1)
    m.running_var.uniform_(0.5, 2)
    return m


torch.manual_seed(0)
CASES = {
    # name: (module, unbatched input shape, the ONNX node that needs the batch axis)
    "conv1d": (nn.Conv1d(3, 4, 3, padding=1), (3, 10), "Conv"),
    "conv2d_reflect": (nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), (3, 7, 8), "Conv"),
    "conv3d_groups": (nn.Conv3d(4, 6, 2, groups=2), (4, 5, 6, 5), "Conv"),
    "conv_transpose1d": (nn.ConvTranspose1d(3, 2, 3, stride=2), (3, 6), "ConvTranspose"),
    "conv_transpose2d": (nn.ConvTranspose2d(3, 2, 3, stride=2, output_padding=1), (3, 5, 4), "ConvTranspose"),
    "conv_transpose3d": (nn.ConvTranspose3d(2, 3, 2), (2, 3, 4, 3), "ConvTranspose"),
    "f_conv2d": (Fn(lambda x: F.conv2d(x, torch.ones(2, 3, 3, 3) / 9, stride=2)), (3, 9, 9), "Conv"),
    "instance_norm1d": (nn.InstanceNorm1d(4, affine=True), (4, 9), "InstanceNormalization"),
    "instance_norm2d": (nn.InstanceNorm2d(4), (4, 5, 6), "InstanceNormalization"),
    "instance_norm3d_running": (_running_stats(nn.InstanceNorm3d(3, track_running_stats=True)),
                                (3, 4, 5, 4), "BatchNormalization"),
    "max_pool1d": (nn.MaxPool1d(3, stride=2, padding=1), (3, 11), "MaxPool"),
    "max_pool2d_ceil": (nn.MaxPool2d(2, ceil_mode=True), (3, 7, 7), "MaxPool"),
    "max_pool3d": (nn.MaxPool3d(2), (2, 4, 6, 4), "MaxPool"),
    "avg_pool1d": (nn.AvgPool1d(2), (3, 8), "AveragePool"),
    "avg_pool2d_pad": (nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (3, 9, 8), "AveragePool"),
    "avg_pool3d": (nn.AvgPool3d(2), (2, 4, 4, 6), "AveragePool"),
    "lp_pool1d": (nn.LPPool1d(2, 3), (3, 9), "LpPool"),
    "lp_pool2d": (nn.LPPool2d(2, 2), (3, 8, 6), "LpPool"),
    "adaptive_avg_pool2d": (nn.AdaptiveAvgPool2d((2, 3)), (3, 8, 9), "AveragePool"),
    "adaptive_avg_pool1d_global": (nn.AdaptiveAvgPool1d(1), (3, 8), "GlobalAveragePool"),
    "adaptive_max_pool3d_global": (nn.AdaptiveMaxPool3d(1), (3, 4, 4, 4), "GlobalMaxPool"),
    "fold": (nn.Fold((5, 6), 2), (12, 20), "Col2Im"),
    "unfold": (nn.Unfold(2, stride=2), (3, 6, 8), "Conv"),
    "pixel_shuffle": (nn.PixelShuffle(2), (8, 3, 4), "DepthToSpace"),
    "pixel_unshuffle": (nn.PixelUnshuffle(2), (3, 4, 6), "Transpose"),
    "fractional_max_pool2d": (nn.FractionalMaxPool2d(2, output_size=4, _random_samples=torch.rand(1, 3, 2)),
                              (3, 9, 10), "ReduceMax"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unbatched_module_is_a_batch_of_one(name, tmp_path):
    module, shape, node = CASES[name]
    got, want, model, _ = export_module(module.eval(), [torch.randn(shape)], tmp_path)
    assert_close(got, want)
    types = op_types(model)
    assert node in types
    # without the wrapping the batched node would see (C, ...) as (N, C, ...), or the
    # operator would be refused: the first node adds the batch axis, the last removes it
    assert types[0] == "Unsqueeze" and types[-1] == "Squeeze"
    assert _axes(model, model.graph.node[0]) == [0] and _axes(model, model.graph.node[-1]) == [0]


def _axes(model, node):
    inits = {i.name: i for i in model.graph.initializer}
    return onnx.numpy_helper.to_array(inits[node.input[1]]).tolist()


@pytest.mark.parametrize("n, shape", [(1, (3, 8)), (2, (3, 6, 8)), (3, (2, 4, 4, 6))])
def test_unbatched_max_pool_indices_and_unpool_equal_torch(n, shape, tmp_path):
    """torch's indices count within each plane: the batch of one must not shift them."""
    got, want, model, _ = export_module(PoolUnpool(n).eval(), [torch.randn(shape)], tmp_path)
    assert got[1].dtype == want[1].dtype == np.int64
    assert np.array_equal(got[1], want[1])
    assert_close(got, want)
    assert "ScatterElements" in op_types(model)


def test_unbatched_max_pool_functional_indices(tmp_path):
    model = Fn(lambda x: F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True))
    got, want, _, _ = export_module(model.eval(), [torch.randn(4, 9, 7)], tmp_path)
    assert np.array_equal(got[1], want[1])
    assert_close(got, want)


@pytest.mark.filterwarnings("ignore:input's size at dim")
@pytest.mark.parametrize("shape", [(4, 9), (2, 4, 9)])
def test_instance_norm_without_weights_normalises_the_input_channels(shape, tmp_path):
    """InstanceNorm1d(8) without affine weights only warns on 4 channels; so must the export
    not size its scale by num_features."""
    got, want, _, _ = export_module(nn.InstanceNorm1d(8).eval(), [torch.randn(shape)], tmp_path)
    assert_close(got, want)


def test_batched_input_is_not_wrapped(tmp_path):
    """A 3-D input to Conv1d is (N, C, L), not unbatched: torch's rule is per operator."""
    got, want, model, _ = export_module(nn.Conv1d(3, 4, 3).eval(), [torch.randn(2, 3, 10)], tmp_path)
    assert_close(got, want)
    assert op_types(model) == ["Conv"]


def test_one_module_on_batched_and_unbatched_input(tmp_path):
    conv = nn.Conv2d(3, 4, 3)
    model = Fn(lambda a, b: (conv(a), conv(b)))
    got, want, model, _ = export_module(model.eval(), [torch.randn(2, 3, 6, 6), torch.randn(3, 6, 6)],
                                        tmp_path)
    assert_close(got, want)
    assert op_types(model).count("Conv") == 2 and op_types(model).count("Unsqueeze") == 1


@pytest.mark.parametrize("shape", [(2, 5, 7), (1, 6, 3, 4, 2)])
def test_local_response_norm_of_rank_3_and_5(shape, tmp_path):
    """torch's LRN takes (N, C, ...) of any rank; onnxruntime's LRN 4-D only."""
    got, want, model, _ = export_module(nn.LocalResponseNorm(3, alpha=0.5, k=1.5).eval(),
                                        [torch.randn(shape)], tmp_path)
    assert_close(got, want)
    assert op_types(model) == ["Reshape", "LRN", "Shape", "Reshape"]


@pytest.mark.parametrize("indices", [False, True])
def test_unbatched_adaptive_max_pool_with_unequal_windows(indices, tmp_path):
    """Unequal windows fall back to gathers, on the batch of one as well."""
    module = nn.AdaptiveMaxPool2d((2, 3), return_indices=indices)
    got, want, model, _ = export_module((Pair(module) if indices else module).eval(),
                                        [torch.randn(3, 7, 8)], tmp_path)
    assert_close(got, want)
    assert op_types(model)[0] == "Unsqueeze" and "MaxPool" not in op_types(model)


def test_rank_neither_batched_nor_unbatched_is_refused():
    """Conv2d on (H, W) is an error in torch; a hand-built graph of it is refused by name."""
    graph = capture(nn.Conv2d(1, 1, 1).eval(), (torch.randn(1, 4, 4),))
    op = next(o for o in graph.ops if o.type == "nn.Conv2d")
    op.inputs[0].shape, op.outputs[0].shape = [4, 4], [4, 4]
    with pytest.raises(UnsupportedOperator, match="input of rank 2"):
        build_model(graph, fp16=False)


def _sdpa(mask=None, **kw):
    return Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw))


ATTENTION = {
    # name: (module, input shapes): torch treats (L, E) as a batch_first batch of one
    "mha_self": (SelfAttend(), [(5, 8)]),
    "mha_self_batch_first": (SelfAttend(batch_first=True), [(5, 8)]),
    "mha_cross_weights": (Attend(), [(5, 8), (7, 8)]),
    "mha_cross_head_weights": (Attend(average=False, batch_first=True), [(5, 8), (7, 8)]),
    "encoder_layer": (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [(5, 8)]),
    "encoder_layer_norm_first": (nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                            norm_first=True), [(5, 8)]),
    "decoder_layer": (nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), [(5, 8), (7, 8)]),
    "transformer": (nn.Transformer(8, 2, 1, 1, 16, dropout=0.0), [(7, 8), (5, 8)]),
    # scaled_dot_product_attention: leading axes are batch axes, any number of them (ONNX: 4)
    "sdpa_rank2": (_sdpa(), [(5, 8), (7, 8), (7, 6)]),
    "sdpa_rank3_heads": (_sdpa(scale=0.3), [(2, 5, 8), (2, 7, 8), (2, 7, 8)]),
    "sdpa_rank2_causal": (_sdpa(is_causal=True), [(5, 8), (5, 8), (5, 8)]),
    "sdpa_rank3_mask2": (_sdpa(torch.randn(5, 7)), [(2, 5, 8), (2, 7, 8), (2, 7, 8)]),
    "sdpa_rank3_mask3": (_sdpa(torch.randn(2, 5, 7)), [(2, 5, 8), (2, 7, 8), (2, 7, 8)]),
}


@pytest.mark.parametrize("name", list(ATTENTION))
def test_unbatched_attention_is_a_batch_of_one(name, tmp_path):
    module, shapes = ATTENTION[name]
    got, want, model, _ = export_module(module.eval(), [torch.randn(s) for s in shapes], tmp_path)
    assert_close(got, want)
    types = op_types(model)
    assert "Attention" in types and types[0] == "Unsqueeze" and types[-1] == "Squeeze"
    assert "Transpose" not in types  # batch_first: no (S, B, E) transposes around the batch of one
