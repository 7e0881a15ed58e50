"""Rank-5/6 reshape -> permute chains (window partition, qkv split) are rewritten to at most
4-d ncnn blobs before lowering: exported from our capture, run in ncnn and compared with torch."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from pnnx_conformance.backends.ncnn_backend import NO_BATCH, declared_batch_indices
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.emit.ncnn.highrank import _merged, _runs, _steps
from pnnx_reference.formats import ncnn_param

WS, C, HEADS, TOKENS = 4, 8, 2, 6


def _partition(x, ws: int):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, ws * ws, c)


def _reverse(windows, ws: int, h: int, w: int):
    c = windows.shape[-1]
    x = windows.view(-1, h // ws, w // ws, ws, ws, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, h, w, c)


class WindowPartition(nn.Module):
    """Rank-6 view + permute into windows, a per-window linear, and back."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        return _reverse(self.proj(_partition(x, WS)), WS, x.shape[1], x.shape[2])


def _attention(qkv, bias, heads: int, unbind: bool):
    """Attention with an additive position bias (which also keeps it from fusing into SDPA)."""
    nb, n, c3 = qkv.shape
    qkv = qkv.reshape(nb, n, 3, heads, c3 // 3 // heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0) if unbind else (qkv[0], qkv[1], qkv[2])
    attn = (q * 0.5 @ k.transpose(-2, -1) + bias).softmax(dim=-1)
    return (attn @ v).transpose(1, 2).reshape(nb, n, c3 // 3)


class WindowAttention(nn.Module):
    """Rank-5 qkv reshape + permute, indexed on the '3' axis, over windows (dim 0 is data)."""

    def __init__(self, unbind: bool = False) -> None:
        super().__init__()
        self.qkv, self.proj, self.unbind = nn.Linear(C, 3 * C), nn.Linear(C, C), unbind
        self.bias = nn.Parameter(torch.randn(HEADS, WS * WS, WS * WS))

    def forward(self, x):
        windows = _partition(x, WS)
        out = self.proj(_attention(self.qkv(windows), self.bias, HEADS, self.unbind))
        return _reverse(out, WS, x.shape[1], x.shape[2])


class TokenAttention(nn.Module):
    """The same qkv split on a batch-1 token sequence (ViT style)."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(C, 3 * C)
        self.bias = nn.Parameter(torch.randn(HEADS, TOKENS, TOKENS))

    def forward(self, x):
        return _attention(self.qkv(x), self.bias, HEADS, unbind=False)


class UnbatchedWindowPartition(WindowPartition):
    """An (H, W, C) input: a batchless graph, where every dim of the rank-6 view is data."""

    def forward(self, x):
        return super().forward(x.unsqueeze(0)).squeeze(0)


class TransposedWindowPartition(WindowPartition):
    """The partition with its permute written as transpose(2, 3), as torch.onnx's Transpose of
    two axes reads back (swin_t through the ONNX route)."""

    def forward(self, x):
        b, h, w, c = x.shape
        windows = x.view(b, h // WS, WS, w // WS, WS, c).transpose(2, 3).reshape(-1, WS * WS, c)
        windows = self.proj(windows).view(b, h // WS, w // WS, WS, WS, c)
        return windows.transpose(2, 3).reshape(b, h, w, c)


def _shifted_window_attention_v2():
    """torchvision's Swin v2 block: its shift mask is a (1, windows, 1, N, N) constant added to
    the scores viewed as (1, windows, heads, N, N), the windows carried as the ncnn batch."""
    from torchvision.models.swin_transformer import ShiftedWindowAttentionV2

    return ShiftedWindowAttentionV2(dim=C, window_size=[WS, WS], shift_size=[WS // 2, WS // 2], num_heads=HEADS)


class ScaledCorrelation(nn.Module):
    """RAFT's correlation volume: a rank-6 view scaled by a constant, then reshaped to images."""

    def forward(self, a, b):
        n, c, h, w = a.shape
        corr = torch.matmul(a.view(n, c, h * w).transpose(1, 2), b.view(n, c, h * w))
        corr = corr.view(n, h, w, 1, h, w) / torch.sqrt(torch.tensor(c, dtype=torch.float32))
        return nn.functional.avg_pool2d(corr.reshape(n * h * w, 1, h, w), 2)


class UnmergeablePermute(nn.Module):
    def forward(self, x):
        return x.view(1, 2, 3, 2, 3, 2).permute(0, 5, 4, 3, 2, 1).reshape(1, 72)


class PatchUnfold(nn.Module):
    """MobileViT's unfold of 2x2 patches and fold back: rank-6 permutes that merge nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        b, c, h, w = x.shape
        t = x.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1).reshape(b * 4, h * w // 4, c)
        t = self.proj(t)
        return t.reshape(b, 2, 2, h // 2, w // 2, c).permute(0, 5, 3, 1, 4, 2).reshape(b, c, h, w)


MODELS = {
    "patch_unfold": (PatchUnfold, (1, C, 8, 8)),
    "patch_unfold_batch2": (PatchUnfold, (2, C, 8, 8)),
    "window_partition": (WindowPartition, (1, 8, 8, C)),
    "window_partition_transposed": (TransposedWindowPartition, (1, 8, 8, C)),
    "window_attention": (WindowAttention, (1, 8, 8, C)),
    "window_attention_unbind": (lambda: WindowAttention(unbind=True), (1, 8, 8, C)),
    "token_attention": (TokenAttention, (1, TOKENS, C)),
    "shifted_window_attention_v2": (_shifted_window_attention_v2, (1, 8, 8, C)),
}


def _export(model, inputs, tmp_path):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return base


def _check(name: str, tmp_path, mode: str, tol: dict = FP32):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model, inputs = make().eval(), [torch.rand(*shape) * 2 - 1]
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert_close(run_ncnn(base, inputs, mode), expected, tol, f"{name} [{mode}]")
    return base


@pytest.mark.parametrize("name", sorted(MODELS))
def test_high_rank_chain_matches_torch_on_cpu(name, tmp_path):
    _check(name, tmp_path, "fp32")


def test_window_partition_lowers_to_two_permutes(tmp_path):
    base = _check("window_partition", tmp_path, "fp32")
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert types.count("Permute") == 2, types


def test_a_rank6_transpose_lowers_as_the_permute_it_is(tmp_path):
    base = _check("window_partition_transposed", tmp_path, "fp32")
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert types.count("Permute") == 2, types


def test_qkv_split_slices_before_permuting(tmp_path):
    base = _check("window_attention", tmp_path, "fp32")
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    # q, k and v are each cut from the qkv projection, then permuted on their own
    assert types.count("Crop") == 3, types


def test_unbatched_window_partition_matches_torch_on_cpu(tmp_path):
    """A batchless graph: the blobs carry every dim, so they are fed and read without a batch axis."""
    torch.manual_seed(0)
    model, x = UnbatchedWindowPartition().eval(), torch.rand(8, 8, C) * 2 - 1
    expected = torch_outputs(model, [x])[0]
    base = _export(model, [x], tmp_path)
    assert declared_batch_indices(f"{base}_ncnn.py") == {"in0": NO_BATCH, "out0": NO_BATCH}
    assert_close(run_ncnn(base, [x], "fp32"), [expected], FP32)


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["window_attention", "window_partition"])
def test_high_rank_chain_matches_torch_on_vulkan(name, tmp_path):
    _check(name, tmp_path, "vulkan", LOW_PRECISION)  # the helper's Vulkan mode keeps ncnn's fp16 defaults


def test_a_rank6_view_scaled_by_a_constant_lowers_without_it(tmp_path):
    """view(1,H,W,1,H,W) / c -> reshape: the division runs on the matmul's output and the two
    reshapes become one, so no blob holds the rank-6 view."""
    torch.manual_seed(0)
    model, inputs = ScaledCorrelation().eval(), [torch.rand(1, 8, 4, 4) * 2 - 1, torch.rand(1, 8, 4, 4) * 2 - 1]
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert_close(run_ncnn(base, inputs, "fp32"), expected, FP32, "scaled correlation [fp32]")


def test_an_unmergeable_rank6_permute_runs_as_a_chain_of_permutes(tmp_path):
    """Reversing 5 axes merges nothing: it becomes two permutes of at most 4 runs each."""
    torch.manual_seed(0)
    model, inputs = UnmergeablePermute().eval(), [torch.rand(72)]
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert_close(run_ncnn(base, inputs, "fp32"), expected, FP32, "reversed rank-6 permute [fp32]")
    assert [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers].count("Permute") == 2


class GridPartition(nn.Module):
    """MaxViT's block partition of a (1, C, H, W) map and its reverse: permute(0,2,4,3,5,1) of a
    rank-6 view moves 6 runs, more than an ncnn blob holds."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        b, c, h, w = x.shape
        p = WS
        windows = x.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(b, -1, p * p, c)
        windows = self.proj(windows).reshape(b, h // p, w // p, p, p, c)
        return windows.permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)


def test_a_grid_partition_matches_torch_on_cpu(tmp_path):
    torch.manual_seed(0)
    model, inputs = GridPartition().eval(), [torch.rand(1, C, 8, 8) * 2 - 1]
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert_close(run_ncnn(base, inputs, "fp32"), expected, FP32, "grid partition [fp32]")


@pytest.mark.parametrize("perm", [(0, 2, 4, 3, 5, 1), (0, 5, 1, 3, 2, 4), (0, 5, 4, 3, 2, 1), (1, 0, 3, 2, 5, 4)])
def test_permute_steps_compose_to_the_permutation(perm):
    steps = _steps(perm)
    assert steps is not None and all(len(_runs(list(s))) <= 4 for s in steps)
    state = tuple(range(len(perm)))
    for move in steps:
        state = tuple(state[i] for i in move)
    assert state == perm


@pytest.mark.parametrize("perm, runs", [
    ([0, 1, 3, 2, 4, 5], [[0, 1], [3], [2], [4, 5]]),
    ([2, 0, 3, 1, 4], [[2], [0], [3], [1], [4]]),
    ([0, 1, 2, 3, 4], [[0, 1, 2, 3, 4]]),
])
def test_runs_group_axes_that_stay_adjacent(perm, runs):
    assert _runs(perm) == runs


def test_merged_shapes_keep_the_element_order():
    x = torch.arange(2 * 3 * 4 * 5 * 6 * 7).reshape(2, 3, 4, 5, 6, 7)
    perm = [0, 1, 3, 2, 4, 5]
    in_shape, new_perm, out_shape = _merged(list(x.shape), perm)
    assert in_shape == [6, 4, 5, 42] and new_perm == [0, 2, 1, 3]
    merged = x.reshape(in_shape).permute(new_perm)
    assert list(merged.shape) == out_shape
    assert torch.equal(merged.reshape(-1), x.permute(perm).reshape(-1))


def test_a_rank5_input_carries_its_dim_0_as_the_batch(tmp_path):
    """An eval-mode dropout is removed, leaving input -> output: the (2, 13, 3, 4, 5) input is fed
    with dim 0 as the ncnn Mat batch (4 dims left for the blob) and read back the same way."""
    model, x = nn.Dropout3d(0.2).eval(), torch.rand(2, 13, 3, 4, 5)
    base = _export(model, [x], tmp_path)
    assert "batch_index=0" in open(f"{base}_ncnn.py").read()
    assert_close(run_ncnn(base, [x]), [x.numpy()], FP32, "rank 5")
