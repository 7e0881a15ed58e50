"""nn.TransformerEncoderLayer -> MultiHeadAttention, BinaryOp adds, LayerNorms and the
feed-forward InnerProducts: exported from our capture, run in ncnn and compared with torch;
what the ncnn layers cannot express is refused with a reason."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param

E, HEADS, FF, L = 16, 4, 32, 6


def _layer(**kw) -> nn.Module:
    args = dict(dim_feedforward=FF, dropout=0.0, batch_first=True) | kw
    return nn.TransformerEncoderLayer(E, HEADS, **args)


class _Encoder(nn.Module):
    """Two layers and a head, like the zoo's transformer_encoder."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.TransformerEncoder(_layer(), num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(E, 5)

    def forward(self, x):
        return self.head(self.encoder(x))


class _Masked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.m = _layer()

    def forward(self, x):
        return self.m(x, src_mask=torch.triu(torch.full((L, L), float("-inf")), diagonal=1))


# name -> module factory; the layer's branches (norm_first, activation, bias, eps) differ per case
MODELS = {
    "post_norm_relu": lambda: _layer(),
    "pre_norm_gelu": lambda: _layer(norm_first=True, activation="gelu"),
    "no_bias_eps": lambda: _layer(bias=False, layer_norm_eps=0.1),
    "encoder_2_layers_head": _Encoder,
    # the batch is the ncnn Mat batch: dim 1 of a sequence-first input, dim 0 of a batch-first one
    "seq_first_b2": lambda: _layer(batch_first=False),
    "batch3": lambda: _layer(),
    "causal_src_mask": _Masked,  # the (L, L) mask is MultiHeadAttention's additive mask (5=1)
}
SHAPES = {"seq_first_b2": (L, 2, E), "batch3": (3, L, E)}


def _model(name: str) -> tuple[nn.Module, list[torch.Tensor]]:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    with torch.no_grad():  # non-trivial LayerNorm affine parameters
        for p in (p for n, p in model.named_parameters() if "norm" in n):
            p.uniform_(0.5, 1.5)
    return model, [torch.rand(*SHAPES.get(name, (1, L, E))) * 2 - 1]


def _export(model, inputs, tmp_path, fp16: bool = False):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=fp16)
    return base


def _check(name: str, tmp_path, mode: str, tol: dict, fp16: bool = False):
    model, inputs = _model(name)
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path, fp16)
    assert_close(run_ncnn(base, inputs, mode), expected, tol, f"{name} [{mode}]")
    return base


@pytest.mark.parametrize("name", sorted(MODELS))
def test_encoder_layer_matches_torch_on_cpu(name, tmp_path):
    _check(name, tmp_path, "fp32", FP32)


def test_encoder_layer_writes_the_component_layers(tmp_path):
    base = _check("pre_norm_gelu", tmp_path, "fp32", FP32)
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert "TransformerEncoderLayer" not in " ".join(types)
    for layer_type, count in (("MultiHeadAttention", 1), ("LayerNorm", 2), ("Gemm", 2),
                              ("BinaryOp", 2), ("GELU", 1)):
        assert types.count(layer_type) == count, types


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["post_norm_relu", "pre_norm_gelu"])
def test_encoder_layer_matches_torch_on_vulkan(name, tmp_path):
    _check(name, tmp_path, "vulkan", LOW_PRECISION, fp16=True)


def _refusal(model, inputs, tmp_path) -> str:
    with pytest.raises(UnsupportedOperator) as info:
        _export(model.eval(), inputs, tmp_path)
    assert not (tmp_path / "m.ncnn.param").exists()
    return str(info.value)


@pytest.mark.parametrize("model, shape, reason", [
    (lambda: _layer(activation=F.silu), (1, L, E), "activation 'silu'"),
], ids=["silu"])
def test_inexpressible_layers_are_refused(model, shape, reason, tmp_path):
    torch.manual_seed(0)
    message = _refusal(model(), [torch.rand(*shape)], tmp_path)
    assert message.startswith("unsupported: nn.TransformerEncoderLayer") and reason in message
