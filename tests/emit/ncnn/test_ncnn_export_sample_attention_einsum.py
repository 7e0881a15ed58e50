"""GridSample, SDPA, Einsum, RNNCell, SyncBatchNorm and Tensor.copy_ lowerings: small models
captured, exported, run on ncnn's CPU and compared with torch; plus the variants ncnn cannot
express, which must be refused with a reason."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param


class Copy(nn.Module):
    def forward(self, x, src):
        y = x * 2.0
        y.copy_(src)
        return y + x


class Cell(nn.Module):
    def __init__(self, nonlinearity: str = "tanh", bias: bool = True, steps: int = 1) -> None:
        super().__init__()
        self.m, self.steps = nn.RNNCell(4, 8, bias=bias, nonlinearity=nonlinearity), steps

    def forward(self, x, *hx):
        h = self.m(x, *hx)
        for _ in range(self.steps - 1):
            h = self.m(x, h)
        return h


def _rand(*shape, low=-1.0, high=1.0):
    return torch.rand(*shape) * (high - low) + low


def _export(model, inputs, tmp_path):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return base


def _layer_types(base) -> list[str]:
    return [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]


def _check(model, inputs, tmp_path, layer: str):
    """Export, assert `layer` was emitted, run on ncnn CPU (fp32) and compare with torch."""
    torch.manual_seed(0)
    model = model.eval()
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert layer in _layer_types(base), _layer_types(base)
    got = run_ncnn(base, inputs)
    assert_close(got, expected, FP32, layer)
    return base


def _refused(model, inputs, tmp_path, reason: str) -> None:
    with pytest.raises(UnsupportedOperator) as info:
        _export(model.eval(), inputs, tmp_path)
    assert reason in str(info.value)


# --- F.grid_sample ---------------------------------------------------------------------
GRID_SAMPLE = {
    "bilinear_zeros": ((1, 3, 6, 8), (1, 5, 7, 2), dict(align_corners=False)),
    "nearest_reflection": ((1, 4, 6, 8), (1, 5, 7, 2), dict(mode="nearest", padding_mode="reflection",
                                                             align_corners=False)),
    "bicubic_border_ac": ((1, 2, 5, 5), (1, 5, 7, 2), dict(mode="bicubic", padding_mode="border",
                                                           align_corners=True)),
    "r5_bilinear": ((1, 3, 4, 5, 6), (1, 2, 3, 4, 3), dict(align_corners=False)),
}


@pytest.mark.parametrize("name", sorted(GRID_SAMPLE))
def test_grid_sample_matches_torch(name, tmp_path):
    x_shape, grid_shape, kwargs = GRID_SAMPLE[name]
    torch.manual_seed(1)
    model = Fn(lambda x, g: F.grid_sample(x, g, **kwargs))
    _check(model, [_rand(*x_shape), _rand(*grid_shape, low=-1.2, high=1.2)], tmp_path, "GridSample")


def test_grid_sample_params_name_mode_and_padding(tmp_path):
    model = Fn(lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True))
    base = _export(model, [_rand(1, 3, 6, 8), _rand(1, 5, 7, 2)], tmp_path)
    layer = next(lay for lay in ncnn_param.load(f"{base}.ncnn.param").layers if lay.type == "GridSample")
    assert {k: layer.params[k] for k in (0, 1, 2, 3)} == {0: 2, 1: 2, 2: 1, 3: 0}


def test_grid_sample_with_batch_2_runs_per_sample(tmp_path):
    """The input and the grid both carry dim 0 as the ncnn Mat batch."""
    model = Fn(lambda x, g: F.grid_sample(x, g, align_corners=False))
    _check(model, [_rand(2, 3, 6, 8), _rand(2, 4, 4, 2)], tmp_path, "GridSample")


# --- F.scaled_dot_product_attention -----------------------------------------------------
Q4 = [(1, 4, 5, 16), (1, 4, 7, 16), (1, 4, 7, 12)]
SDPA = {
    "r4_heads": (Q4, {}),
    "scale": (Q4, dict(scale=0.5)),
    "gqa": ([(1, 4, 5, 8), (1, 2, 6, 8), (1, 2, 6, 8)], dict(enable_gqa=True)),
    "causal": ([(1, 2, 6, 8)] * 3, dict(is_causal=True)),
    "causal_rect": ([(1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8)], dict(is_causal=True)),
    "r3_single_head": ([(1, 6, 8)] * 3, {}),
}


@pytest.mark.parametrize("name", sorted(SDPA))
def test_sdpa_matches_torch(name, tmp_path):
    shapes, kwargs = SDPA[name]
    torch.manual_seed(2)
    model = Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs))
    _check(model, [_rand(*s) for s in shapes], tmp_path, "SDPA")


def test_sdpa_with_a_float_mask_matches_torch(tmp_path):
    torch.manual_seed(3)
    model = Fn(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m))
    base = _check(model, [_rand(*s) for s in Q4] + [_rand(1, 1, 5, 7)], tmp_path, "SDPA")
    layer = next(lay for lay in ncnn_param.load(f"{base}.ncnn.param").layers if lay.type == "SDPA")
    assert layer.params[5] == 1 and len(layer.inputs) == 4


def test_sdpa_batchless_leading_axis_acts_as_heads(tmp_path):
    torch.manual_seed(4)
    model = Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v))
    _check(model, [_rand(2, 6, 8) for _ in range(3)], tmp_path, "SDPA")


def test_hand_written_attention_is_one_sdpa_layer_for_ncnn_only(tmp_path):
    """softmax(q @ k^T * s) @ v becomes ncnn's SDPA layer; the captured graph (pnnx.param,
    `_pnnx.py`) keeps the three operators, which reproduce the model bit for bit."""
    torch.manual_seed(5)
    model = Fn(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) * 0.25, dim=-1) @ v)
    inputs = [_rand(*s) for s in Q4]
    graph = capture(model.eval(), tuple(inputs))
    assert "F.scaled_dot_product_attention" not in [op.type for op in graph.ops]
    assert [op.type for op in graph.ops].count("torch.matmul") == 2
    _check(model, inputs, tmp_path, "SDPA")


def test_sdpa_with_a_row_broadcast_mask_is_refused(tmp_path):
    model = Fn(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m))
    _refused(model, [_rand(*s) for s in Q4] + [_rand(1, 1, 1, 7)], tmp_path, "attn_mask")


def test_sdpa_with_dropout_is_refused(tmp_path):
    model = Fn(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    _refused(model, [_rand(*s) for s in Q4], tmp_path, "dropout_p")


# --- torch.einsum -----------------------------------------------------------------------
EINSUM = {
    "matmul": ("ij,jk->ik", [(4, 13), (13, 8)]),
    "batched_matmul": ("bij,bjk->bik", [(2, 4, 6), (2, 6, 5)]),
    "transpose": ("ij->ji", [(4, 12)]),
    "three_operands": ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    "implicit_output": ("ij,jk", [(4, 13), (13, 8)]),
    "attn_scores_batch1": ("bhqd,bhkd->bhqk", [(1, 2, 5, 8), (1, 2, 7, 8)]),
    "bmm_batch1": ("bij,bjk->bik", [(1, 4, 6), (1, 6, 5)]),
    # the batch letter summed away: the batch of 1 goes back into the blobs
    "bmm_summed_batch1": ("bij,bjk->ik", [(1, 4, 6), (1, 6, 5)]),
    # more than 4 indices: letters that stay together everywhere (a, b) run as one merged index
    "two_leading_letters_merged": ("abij,abjk->abik", [(2, 3, 4, 5), (2, 3, 5, 2)]),
    # maxvit's block attention: 5 indices besides the batch of 1, g and h merged
    "maxvit_scores": ("bghid,bghjd->bghij", [(1, 4, 2, 6, 8), (1, 4, 2, 7, 8)]),
    "maxvit_values": ("bghij,bghjd->bghid", [(1, 4, 2, 6, 7), (1, 4, 2, 7, 8)]),
}


@pytest.mark.parametrize("name", sorted(EINSUM))
def test_einsum_matches_torch(name, tmp_path):
    equation, shapes = EINSUM[name]
    torch.manual_seed(5)
    model = Fn(lambda *xs: torch.einsum(equation, *xs))
    _check(model, [_rand(*s) for s in shapes], tmp_path, "Einsum")


def test_einsum_renames_output_letters_first(tmp_path):
    model = Fn(lambda a, b: torch.einsum("ij,jk->ik", a, b))
    base = _export(model, [_rand(4, 13), _rand(13, 8)], tmp_path)
    layer = next(lay for lay in ncnn_param.load(f"{base}.ncnn.param").layers if lay.type == "Einsum")
    assert "".join(map(chr, layer.params[0])) == "ik,kj->ij"


@pytest.mark.parametrize("equation, shapes, reason", [
    ("i,i->", [(12,), (12,)], "0-d result"),
    ("abij,bajk->abik", [(2, 3, 4, 5), (3, 2, 5, 2)], "at most 4"),  # a and b in two orders: nothing merges
])
def test_einsum_ncnn_cannot_express_is_refused(equation, shapes, reason, tmp_path):
    model = Fn(lambda *xs: torch.einsum(equation, *xs))
    _refused(model, [_rand(*s) for s in shapes], tmp_path, reason)


# --- nn.RNNCell -------------------------------------------------------------------------
RNN_CELL = {
    "hx": (Cell(), [(1, 4), (1, 8)]),
    "no_hx": (Cell(), [(1, 4)]),
    "relu_nobias": (Cell("relu", bias=False), [(1, 4), (1, 8)]),
    "two_steps": (Cell(steps=2), [(1, 4), (1, 8)]),
}


@pytest.mark.parametrize("name", sorted(RNN_CELL))
def test_rnn_cell_matches_torch(name, tmp_path):
    torch.manual_seed(6)
    model, shapes = RNN_CELL[name]
    _check(model, [_rand(*s) for s in shapes], tmp_path, "InnerProduct")


def test_rnn_cell_batch_2_runs_row_by_row(tmp_path):
    torch.manual_seed(7)
    _check(Cell(), [_rand(2, 4), _rand(2, 8)], tmp_path, "InnerProduct")


# --- nn.SyncBatchNorm -------------------------------------------------------------------
def _sync_bn(track: bool = True):
    torch.manual_seed(8)
    m = nn.SyncBatchNorm(8, track_running_stats=track)
    if track:
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
    m.weight.data.uniform_(0.5, 1.5)
    m.bias.data.uniform_(-1, 1)
    return m


@pytest.mark.parametrize("shape", [(1, 8, 5, 6), (1, 8, 9), (1, 8, 3, 4, 5)])
def test_sync_batch_norm_matches_torch(shape, tmp_path):
    _check(_sync_bn(), [_rand(*shape)], tmp_path, "BatchNorm")


def test_sync_batch_norm_without_running_stats_normalises_over_the_batch(tmp_path):
    """No running statistics: each channel uses its own batch statistics, an InstanceNorm."""
    _check(_sync_bn(track=False), [_rand(1, 8, 5, 6)], tmp_path, "InstanceNorm")


# --- Tensor.copy_ -----------------------------------------------------------------------
def test_copy_same_shape_reads_the_source(tmp_path):
    torch.manual_seed(9)
    base = _check(Copy(), [_rand(1, 3, 8, 8), _rand(1, 3, 8, 8)], tmp_path, "BinaryOp")
    assert _layer_types(base).count("BinaryOp") == 1  # y = x * 2 is dead: copy_ overwrote it


def test_copy_broadcast_source_tiles(tmp_path):
    torch.manual_seed(10)

    class Broadcast(nn.Module):
        def forward(self, x, src):
            y = x * 1.0
            y.copy_(src)
            return y

    _check(Broadcast(), [_rand(2, 4, 5), _rand(5)], tmp_path, "Tile")


def test_copy_of_an_integer_source_is_its_values(tmp_path):
    """ncnn carries an integer as its float value, so copying one into a float tensor is exact."""
    class IntCopy(nn.Module):
        def forward(self, x, src):
            y = x + 0.0
            y.copy_(src)
            return y

    _check(IntCopy(), [_rand(1, 4), torch.randint(-5, 5, (1, 4))], tmp_path, "Input")
