"""nn.MultiheadAttention with add_bias_kv / add_zero_attn (torch appends projected key/value
rows, bias_k/bias_v then zeros, to every sequence, and a column to the masks) and separate
kdim/vdim projections: ncnn MultiHeadAttention (the rows as unit input rows that widened
key/value weights project to them), ONNX Attention (the rows concatenated after the
projections), each against torch on ncnn CPU, Vulkan and onnxruntime."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn, run_onnx
from ncnn_export_helpers import FP32, LOW_PRECISION, layer_types, lowered, torch_outputs
from pnnx_reference.api import export

E, L, S, N = 8, 5, 6, 2


class Result(nn.Module):
    def __init__(self, call, **kw):
        super().__init__()
        self.m = nn.MultiheadAttention(E, 2, **kw)
        self.call = call

    def forward(self, *args):
        return self.call(self.m, *args)[0]


def _r(*shape, seed=0):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed + sum(shape))) - 0.5


CAUSAL = torch.triu(torch.full((L, L), float("-inf")), 1)
PADDING = torch.tensor([[False] * (S - 1) + [True], [False] * S])
FORMS = {
    "bias_kv": (dict(add_bias_kv=True), lambda m, x: m(x, x, x), [_r(L, N, E)]),
    "zero_attn": (dict(add_zero_attn=True), lambda m, x: m(x, x, x), [_r(L, N, E)]),
    "both_cross_batch_first": (dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
                               lambda m, q, k: m(q, k, k), [_r(N, L, E), _r(N, S, E, seed=1)]),
    "both_kdim_vdim": (dict(add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=5), lambda m, q, k, v: m(q, k, v),
                       [_r(L, N, E), _r(S, N, 6, seed=1), _r(S, N, 5, seed=2)]),
    "kdim_vdim": (dict(kdim=6, vdim=5), lambda m, q, k, v: m(q, k, v),
                  [_r(L, N, E), _r(S, N, 6, seed=1), _r(S, N, 5, seed=2)]),
    "both_causal": (dict(add_bias_kv=True, add_zero_attn=True), lambda m, x: m(x, x, x, attn_mask=CAUSAL),
                    [_r(L, N, E)]),
    "bias_kv_mask_input": (dict(add_bias_kv=True), lambda m, x, a: m(x, x, x, attn_mask=a),
                           [_r(L, N, E), _r(L, L, seed=3)]),
    "both_key_padding": (dict(add_bias_kv=True, add_zero_attn=True, batch_first=True),
                         lambda m, x: m(x, x, x, key_padding_mask=PADDING), [_r(N, S, E)]),
    "both_unbatched": (dict(add_bias_kv=True, add_zero_attn=True), lambda m, x: m(x, x, x), [_r(L, E)]),
}


def _model(name):
    kw, call, inputs = FORMS[name]
    torch.manual_seed(0)
    model = Result(call, **kw)
    for p in model.parameters():
        nn.init.uniform_(p, -0.5, 0.5)
    return model.eval(), inputs


def _ncnn(tmp_path, name, fp16):
    model, inputs = _model(name)
    return model, inputs, lowered(tmp_path, model, inputs, fp16)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_mha_matches_torch_on_ncnn_cpu(tmp_path, name):
    model, inputs, base = _ncnn(tmp_path, name, fp16=False)
    assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, name)
    layers = layer_types(tmp_path / "m.ncnn.param")
    assert layers.count("MultiHeadAttention") == 1


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["both_kdim_vdim", "both_causal", "both_key_padding"])
def test_mha_matches_torch_on_vulkan(tmp_path, name):
    model, inputs, base = _ncnn(tmp_path, name, fp16=True)
    assert_close(run_ncnn(base, inputs, "vulkan"), torch_outputs(model, inputs), LOW_PRECISION, name)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_mha_matches_torch_in_pnnx_onnx(tmp_path, name):
    model, inputs = _model(name)
    result = export(model, tuple(inputs), tmp_path, "m", fp16=False)
    assert not result.unsupported, result.unsupported
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), torch_outputs(model, inputs), FP32, name)


@pytest.mark.parametrize("average", [True, False])
def test_the_attention_weights_over_the_appended_keys_in_pnnx_onnx(tmp_path, average):
    """Both results, the weights (N, L, S + 2) covering the appended keys."""
    torch.manual_seed(0)
    model = Result(lambda m, x: (m(x, x, x, average_attn_weights=average),), add_bias_kv=True,
                   add_zero_attn=True).eval()
    inputs = [_r(L, N, E)]
    result = export(model, tuple(inputs), tmp_path, "m", fp16=False)
    assert "onnx" not in result.unsupported, result.unsupported  # ncnn's layer returns no weights
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), torch_outputs(model, inputs), FP32, "weights")
