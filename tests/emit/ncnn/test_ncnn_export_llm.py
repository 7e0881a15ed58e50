"""Decoder LLMs on ncnn: hand-written RMSNorm fused to the RMSNorm layer (and only where the
meaning is torch's rms_norm), the fusion switched off on request, and a LLaMA-style decode step
with a key/value cache run token by token on ncnn CPU and Vulkan against torch."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from pnnx_model_zoo import hf
from pnnx_op_cases.case import Case
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.formats import ncnn_param

TIGHT = dict(atol=1e-5, rtol=1e-5)  # fp32 weights (fp16=False): only summation order differs


class Norm(nn.Module):
    """The ways RMSNorm is written: `form` picks one; the last three are not rms_norm."""

    def __init__(self, form: str) -> None:
        super().__init__()
        self.form, self.weight = form, nn.Parameter(torch.rand(16) + 0.5)

    def forward(self, x):
        f = self.form
        if f == "hf":  # transformers' LlamaRMSNorm: cast, normalise, cast back, then the weight
            y = x.to(torch.float32)
            y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6)
            return self.weight * y.to(x.dtype)
        if f == "inline":
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight
        if f == "unweighted":
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)
        if f == "other_dim":
            return x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6)
        if f == "other_x":
            return (x + 1) * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) + self.weight  # "added"


def _export(model, inputs, tmp_path, fuse=True):
    base = tmp_path / "m"
    write_ncnn(capture(model.eval(), tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin",
               f"{base}_ncnn.py", fp16=False, fuse=fuse)
    return base


def _layers(base) -> list[str]:
    return [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]


@pytest.mark.parametrize("form, fused", [("hf", True), ("inline", True), ("unweighted", True),
                                         ("other_dim", False), ("other_x", False), ("added", False)])
def test_rms_norm_is_one_layer_where_it_means_rms_norm(form, fused, tmp_path):
    torch.manual_seed(0)
    model, x = Norm(form), torch.randn(2, 5, 16)
    base = _export(model, [x], tmp_path)
    layers = _layers(base)
    assert ("RMSNorm" in layers) == fused, layers
    assert ("UnaryOp" not in layers) == fused, layers  # rsqrt stays only where nothing was fused
    with torch.no_grad():
        assert_close(run_ncnn(base, [x]), [model(x)], TIGHT, form)


def test_fusion_switched_off_lowers_as_written(tmp_path):
    torch.manual_seed(0)
    model, x = Norm("hf"), torch.randn(2, 5, 16)
    base = _export(model, [x], tmp_path, fuse=False)
    assert "RMSNorm" not in _layers(base)
    with torch.no_grad():
        assert_close(run_ncnn(base, [x]), [model(x)], TIGHT, "unfused")


def _decode_case() -> Case:
    cid, source, inputs = next(c for c in hf.cases() if c[0].startswith("llm_decode_step"))
    return Case(f"models.{cid}", "models.llm_decode_step", source, inputs)


@pytest.mark.parametrize("mode", ["fp32", "vulkan-fp32"])
def test_decode_step_matches_torch_token_by_token(mode, tmp_path):
    """(token, position, past_k, past_v) -> (logits, k, v): converted once at a past of 3, run for
    4 steps feeding ncnn's own k/v back (the past grows to 7), the next token greedy from torch."""
    case = _decode_case()
    model = case.make_model()
    ids, pos, past_k, past_v = case.make_inputs()
    base = _export(model, [ids, pos, past_k, past_v], tmp_path)
    layers = _layers(base)
    assert layers.count("RMSNorm") == 3 and layers.count("RotaryEmbed") == 2 and "SDPA" in layers
    k, v, start = past_k, past_v, past_k.shape[2]
    for step in range(4):
        position = torch.tensor([[start + step]])
        with torch.no_grad():
            want = model(ids, position, past_k, past_v)
        got = run_ncnn(base, [ids, position, k, v], mode)
        assert_close(got, want, dict(atol=1e-4, rtol=1e-4), f"step {step}")
        assert got[1].shape[2] == start + step + 1
        k, v = torch.from_numpy(got[1]), torch.from_numpy(got[2])
        past_k, past_v = want[1], want[2]
        ids = want[0].argmax(-1)


class Rope(nn.Module):
    """x * cos + rotate_half(x) * sin on (1, heads, L, E): `tables` "llama" repeats each half
    (cat(freqs, freqs)), "random" does not, so only "llama" is RotaryEmbed's meaning."""

    def __init__(self, tables: str, length: int = 6, dim: int = 8) -> None:
        super().__init__()
        freqs = torch.outer(torch.arange(length).float(), 1.0 / 10000 ** (torch.arange(0, dim, 2).float() / dim))
        emb = torch.cat((freqs, freqs), -1) if tables == "llama" else torch.rand(length, dim) * 6
        self.register_buffer("cos", emb.cos()[None, None])
        self.register_buffer("sin", emb.sin()[None, None])

    def forward(self, x):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos + rotated * self.sin


@pytest.mark.parametrize("tables, fused", [("llama", True), ("random", False)])
def test_rotary_embedding_is_one_layer_where_its_tables_repeat_their_halves(tables, fused, tmp_path):
    torch.manual_seed(0)
    model, x = Rope(tables), torch.randn(1, 3, 6, 8)
    base = _export(model, [x], tmp_path)
    layers = _layers(base)
    assert ("RotaryEmbed" in layers) == fused and ("Concat" not in layers) == fused, layers
    with torch.no_grad():
        for mode in ("fp32", "vulkan-fp32"):
            assert_close(run_ncnn(base, [x], mode), [model(x)], TIGHT, f"{tables} {mode}")
    assert "RotaryEmbed" not in _layers(_export(model, [x], tmp_path, fuse=False))


class BoolMaskSdpa(nn.Module):
    """A constant bool attn_mask (True: attend), as a traced transformers decoder carries its
    causal mask: ncnn SDPA adds its mask, so True must become 0 and False a large negative."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("mask", torch.ones(5, 5, dtype=torch.bool).tril()[None, None])

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.mask)


def test_sdpa_bool_mask_says_where_to_attend(tmp_path):
    torch.manual_seed(0)
    model = BoolMaskSdpa()
    inputs = [torch.randn(1, 2, 5, 8) for _ in range(3)]
    base = _export(model, inputs, tmp_path)
    with torch.no_grad():
        assert_close(run_ncnn(base, inputs), [model(*inputs)], TIGHT, "bool mask")


class TwoLookups(nn.Module):
    """One index input read by two tables (a decode step's cos and sin at its position)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("a", torch.rand(64, 8))
        self.register_buffer("b", torch.rand(64, 8))

    def forward(self, pos):
        return nn.functional.embedding(pos, self.a) * nn.functional.embedding(pos, self.b)


def test_indices_read_twice_are_split_on_the_cpu(tmp_path):
    """ncnn's Split of an int32-bits input runs without Vulkan: with fp16 storage the GPU would
    read the indices as float values and look up other rows."""
    model, pos = TwoLookups(), torch.tensor([[37, 5, 60]])
    base = _export(model, [pos], tmp_path)
    split = next(layer for layer in ncnn_param.load(f"{base}.ncnn.param").layers if layer.type == "Split")
    assert split.params.get(31) == 16
    with torch.no_grad():
        assert_close(run_ncnn(base, [pos], "vulkan"), [model(pos)], dict(atol=2e-3, rtol=2e-3), "vulkan fp16")


class Sdpa(nn.Module):
    def __init__(self, **kw) -> None:
        super().__init__()
        self.kw = kw

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, **self.kw)


@pytest.mark.parametrize("q_shape, kv_shape, kw", [
    ((1, 3, 4, 7, 8), (1, 3, 4, 7, 8), {}),                           # windows x heads
    ((1, 3, 4, 7, 8), (1, 3, 4, 5, 8), {"is_causal": True}),
    ((1, 2, 4, 6, 8), (1, 2, 2, 6, 8), {"enable_gqa": True}),         # grouped heads per window
])
def test_rank_five_attention_folds_its_windows_into_the_heads(q_shape, kv_shape, kw, tmp_path):
    torch.manual_seed(0)
    model = Sdpa(**kw)
    inputs = [torch.randn(*q_shape), torch.randn(*kv_shape), torch.randn(*kv_shape)]
    base = _export(model, inputs, tmp_path)
    assert _layers(base).count("SDPA") == 1
    with torch.no_grad():
        for mode in ("fp32", "vulkan-fp32"):
            assert_close(run_ncnn(base, inputs, mode), [model(*inputs)], TIGHT, mode)


class Unfold(nn.Module):
    def __init__(self, dim: int, size: int, step: int) -> None:
        super().__init__()
        self.args = (dim, size, step)

    def forward(self, x):
        return x.unfold(*self.args) * 2


@pytest.mark.parametrize("shape, args", [((1, 3, 10, 6), (2, 4, 2)), ((1, 3, 10, 6), (-1, 3, 3)),
                                         ((1, 9, 8), (1, 3, 2)), ((2, 9), (1, 5, 4))])
def test_tensor_unfold_windows(shape, args, tmp_path):
    """Halo attention's neighbourhoods: a new trailing axis of `size` per window."""
    torch.manual_seed(0)
    model, x = Unfold(*args), torch.randn(*shape)
    base = _export(model, [x], tmp_path)
    with torch.no_grad():
        assert_close(run_ncnn(base, [x]), [model(x)], TIGHT, str(args))


class WindowAttention(nn.Module):
    """Swin-style: a rank-6 window partition, attention per window and head as one rank-5 SDPA
    (batch, windows, heads, tokens, dim), and the windows merged back."""

    def __init__(self, c: int = 16, heads: int = 2, win: int = 4) -> None:
        super().__init__()
        self.qkv, self.heads, self.win = nn.Linear(c, 3 * c), heads, win

    def forward(self, x):
        b, h, w, c = x.shape
        s = self.win
        t = x.view(b, h // s, s, w // s, s, c).permute(0, 1, 3, 2, 4, 5).reshape(b, -1, s * s, c)
        q, k, v = self.qkv(t).view(b, -1, s * s, 3, self.heads, c // self.heads).permute(3, 0, 1, 4, 2, 5)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # (b, windows, heads, s*s, c/heads)
        a = a.transpose(2, 3).reshape(b, h // s, w // s, s, s, c)
        return a.permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, c)


def test_window_attention_rank_six_partition_and_rank_five_sdpa(tmp_path):
    torch.manual_seed(0)
    model, x = WindowAttention().eval(), torch.randn(1, 8, 8, 16)
    base = _export(model, [x], tmp_path)
    assert _layers(base).count("SDPA") == 1
    with torch.no_grad():
        assert_close(run_ncnn(base, [x]), [model(x)], TIGHT, "windows")


class LookupRope(Rope):
    """Rope's tables looked up by position at run time (a decode step's)."""

    def forward(self, x, pos):
        cos = nn.functional.embedding(pos, self.cos[0, 0]).unsqueeze(1)
        sin = nn.functional.embedding(pos, self.sin[0, 0]).unsqueeze(1)
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


@pytest.mark.parametrize("tables, fused", [("llama", True), ("random", False)])
def test_rotary_embedding_of_tables_looked_up_by_position(tables, fused, tmp_path):
    torch.manual_seed(0)
    model, x, pos = LookupRope(tables), torch.randn(1, 3, 2, 8), torch.tensor([[4, 1]])
    base = _export(model, [x, pos], tmp_path)
    assert ("RotaryEmbed" in _layers(base)) == fused
    with torch.no_grad():
        for mode in ("fp32", "vulkan-fp32"):
            assert_close(run_ncnn(base, [x, pos], mode), [model(x, pos)], TIGHT, f"{tables} {mode}")
