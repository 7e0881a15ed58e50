"""LSTMCell/GRUCell, norms and RNNs on inputs whose dim 0 is not 1 (a batch above 1, or no batch
axis): exported from our capture, run in ncnn (CPU fp32, and a few on Vulkan) with each blob fed
and read with the batch index the generated _ncnn.py declares, compared with torch."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, layer_types, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn


class Cell(nn.Module):
    """A cell called with or without its state; LSTMCell's (h, c) come back as two outputs."""

    def __init__(self, cell: nn.Module, with_state: bool) -> None:
        super().__init__()
        self.m, self.with_state = cell, with_state

    def forward(self, x, *state):
        if isinstance(self.m, nn.LSTMCell):
            h, c = self.m(x, tuple(state)) if self.with_state else self.m(x)
            return h, c
        return self.m(x, *state) if self.with_state else self.m(x)


class Seq(nn.Module):
    """An RNN returning its output and final states (flattened), optionally given initial ones."""

    def __init__(self, rnn: nn.Module) -> None:
        super().__init__()
        self.m = rnn

    def forward(self, x, *state):
        if state:
            out, final = self.m(x, tuple(state) if isinstance(self.m, nn.LSTM) else state[0])
        else:
            out, final = self.m(x)
        return (out, *final) if isinstance(final, tuple) else (out, final)


class Fn(nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn
        self.w, self.b = nn.Parameter(torch.rand(16) + 0.5), nn.Parameter(torch.rand(16) - 0.5)
        self.register_buffer("mean", torch.rand(16))
        self.register_buffer("var", torch.rand(16) + 0.5)

    def forward(self, x):
        return self.fn(self, x)


def _affine(module: nn.Module) -> nn.Module:
    """Non-trivial affine parameters and running statistics, so that tiling them is checked."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            p.uniform_(0.5, 1.5) if name.endswith("weight") else p.uniform_(-0.5, 0.5)
        for name, buf in module.named_buffers():
            if name.endswith("running_mean"):
                buf.uniform_(-0.3, 0.3)
            elif name.endswith("running_var"):
                buf.uniform_(0.5, 2.0)
    return module


def _cells():
    return {
        "lstm_cell_b2": (Cell(nn.LSTMCell(4, 8), False), [(2, 4)]),
        "lstm_cell_state_b3": (Cell(nn.LSTMCell(4, 8), True), [(3, 4), (3, 8), (3, 8)]),
        "lstm_cell_unbatched_state": (Cell(nn.LSTMCell(4, 8), True), [(4,), (8,), (8,)]),
        "lstm_cell_b1_nobias": (Cell(nn.LSTMCell(4, 8, bias=False), True), [(1, 4), (1, 8), (1, 8)]),
        "gru_cell_b2": (Cell(nn.GRUCell(4, 8), False), [(2, 4)]),
        "gru_cell_state_b2": (Cell(nn.GRUCell(4, 8), True), [(2, 4), (2, 8)]),
        "gru_cell_unbatched": (Cell(nn.GRUCell(4, 8), False), [(4,)]),
        "gru_cell_b1_nobias": (Cell(nn.GRUCell(4, 8, bias=False), True), [(1, 4), (1, 8)]),
        "rnn_cell_relu_state_b2": (Cell(nn.RNNCell(4, 8, nonlinearity="relu"), True), [(2, 4), (2, 8)]),
    }


def _norms():
    return {
        "layer_norm_b2": (_affine(nn.LayerNorm(16)), [(2, 5, 16)]),
        "layer_norm_3dims_b2": (_affine(nn.LayerNorm([3, 4, 5])), [(2, 3, 4, 5)]),  # (2, 60) view
        "layer_norm_rows": (nn.LayerNorm(13, elementwise_affine=False), [(3, 13)]),
        "f_layer_norm_b2": (Fn(lambda m, x: F.layer_norm(x, [16], m.w, m.b)), [(2, 5, 16)]),
        "rms_norm_b2": (_affine(nn.RMSNorm(16)), [(2, 5, 16)]),
        "f_rms_norm_b2": (Fn(lambda m, x: F.rms_norm(x, [16], m.w)), [(2, 5, 16)]),
        "rms_norm_rank4_b1": (_affine(nn.RMSNorm(6)), [(1, 2, 3, 4, 6)]),  # (24, 6) view
        "instance_norm1d_b2": (nn.InstanceNorm1d(8), [(2, 8, 9)]),
        "instance_norm1d_affine_b1": (_affine(nn.InstanceNorm1d(8, affine=True)), [(1, 8, 9)]),
        "instance_norm2d_affine_b2": (_affine(nn.InstanceNorm2d(8, affine=True)), [(2, 8, 5, 6)]),
        "instance_norm2d_unbatched": (nn.InstanceNorm2d(8), [(8, 5, 6)]),
        "instance_norm3d_b1": (_affine(nn.InstanceNorm3d(4, affine=True)), [(1, 4, 3, 4, 5)]),
        "instance_norm2d_tracked_b2": (_affine(nn.InstanceNorm2d(8, affine=True, track_running_stats=True)),
                                       [(2, 8, 5, 6)]),
        "group_norm_b2": (_affine(nn.GroupNorm(4, 12)), [(2, 12, 4, 4)]),
        "batch_norm1d_rows_b4": (_affine(nn.BatchNorm1d(8)), [(4, 8)]),
        "batch_norm2d_b3": (_affine(nn.BatchNorm2d(8)), [(3, 8, 5, 6)]),
        # no running statistics: each channel normalised over the batch too ((C, N, size) view)
        "batch_norm2d_batch_stats_b2": (_affine(nn.BatchNorm2d(8, track_running_stats=False)), [(2, 8, 5, 6)]),
        "batch_norm1d_batch_stats_b1": (_affine(nn.BatchNorm1d(8, track_running_stats=False)), [(1, 8, 9)]),
        "batch_norm1d_batch_stats_rows": (nn.BatchNorm1d(8, affine=False, track_running_stats=False), [(4, 8)]),
        "instance_norm3d_b2": (nn.InstanceNorm3d(8), [(2, 8, 3, 4, 5)]),  # rank 5: the batch in the Mat
        "lrn_b2": (nn.LocalResponseNorm(3, alpha=0.5, k=2.0), [(2, 8, 7)]),  # (C, N, size) view
        "f_lrn_b2": (Fn(lambda m, x: F.local_response_norm(x, 5, alpha=0.3, beta=0.6)), [(2, 13, 5, 5)]),
        "lrn_rank5_b1": (nn.LocalResponseNorm(3, alpha=0.5), [(1, 8, 2, 3, 4)]),  # (C, 1, size) view
        "f_batch_norm_training_b2": (Fn(lambda m, x: F.batch_norm(x, m.mean, m.var, m.w, m.b, training=True)),
                                     [(2, 16, 3)]),
    }


def _rnns():
    return {
        "lstm_time_major_b2": (Seq(nn.LSTM(4, 8)), [(5, 2, 4)]),
        "gru_batch_first_b2": (Seq(nn.GRU(4, 8, batch_first=True)), [(2, 5, 4)]),
        "rnn_layers2_bidirectional_h0_b3": (Seq(nn.RNN(4, 8, num_layers=2, bidirectional=True)),
                                            [(5, 3, 4), (4, 3, 8)]),
        "lstm_proj_h0_b2": (Seq(nn.LSTM(4, 8, proj_size=3, batch_first=True)), [(2, 5, 4), (1, 2, 3), (1, 2, 8)]),
        "gru_large_batch_b6": (Seq(nn.GRU(4, 8)), [(5, 6, 4)]),
        "lstm_batch_first_b32": (Seq(nn.LSTM(4, 8, batch_first=True)), [(32, 5, 4)]),
        "gru_layers2_bidirectional_h0_b4": (Seq(nn.GRU(8, 16, num_layers=2, bidirectional=True)),
                                            [(4, 5, 8), (4, 5, 16)]),
        "gru_layers2_unbatched_h0": (Seq(nn.GRU(4, 8, num_layers=2)), [(5, 4), (2, 8)]),
    }


CASES = {**_cells(), **_norms(), **_rnns()}


def _export(name: str, tmp_path):
    torch.manual_seed(0)
    model, shapes = CASES[name]
    torch.manual_seed(1)
    inputs = [torch.rand(s) * 2 - 1 for s in shapes]
    model = model.eval()
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return model, inputs, base


def _check(name: str, tmp_path, mode: str = "fp32") -> None:
    model, inputs, base = _export(name, tmp_path)
    expected = torch_outputs(model, inputs)
    got = run_ncnn(base, inputs, mode)
    for g, e in zip(got, expected):  # ncnn may drop or keep leading 1s; the data must line up
        assert [d for d in g.shape if d != 1] == [d for d in e.shape if d != 1], f"{name}: {g.shape} vs {e.shape}"
    assert_close([g.reshape(e.shape) for g, e in zip(got, expected)], expected, FP32, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch_fp32(name, tmp_path):
    _check(name, tmp_path)


@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["lstm_cell_state_b3", "gru_cell_b2", "instance_norm2d_affine_b2",
                                  "layer_norm_3dims_b2", "lstm_time_major_b2"])
def test_matches_torch_vulkan(name, tmp_path):
    _check(name, tmp_path, mode="vulkan-fp32")


def test_cells_are_inner_products_not_recurrent_layers(tmp_path):
    _, _, base = _export("lstm_cell_state_b3", tmp_path)
    types = layer_types(f"{base}.ncnn.param")
    assert types.count("InnerProduct") == 2 and "LSTM" not in types and "Slice" in types


def test_rnn_batch_is_the_mat_batch(tmp_path):
    """One ncnn layer per torch layer and direction set, whatever the batch: ncnn runs the layers
    once per sequence, the time-major input fed with its dim 1 as the batch."""
    _, _, base = _export("rnn_layers2_bidirectional_h0_b3", tmp_path)
    assert layer_types(f"{base}.ncnn.param").count("RNN") == 2
    assert 'ex.input("in0", ncnn.Mat(in0.numpy(), batch_index=1)' in open(f"{base}_ncnn.py").read()


@pytest.mark.parametrize("model,shape", [(nn.Conv2d(8, 4, 3), (2, 8, 6, 6)), (nn.MaxPool2d(2), (2, 8, 6, 6))])
def test_layout_bound_ops_carry_the_batch_in_the_mat(model, shape, tmp_path):
    torch.manual_seed(0)
    x = torch.rand(shape)
    base = tmp_path / "m"
    write_ncnn(capture(model.eval(), (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    assert "batch_index=0" in open(f"{base}_ncnn.py").read()
    expected = torch_outputs(model, [x])
    assert_close(run_ncnn(base, [x]), expected, FP32, "batch 2")


class RowCosine(nn.Module):
    """Cosine similarity written out, as torch.onnx's decomposition reads back: (3, 8) rows
    against one (1, 8) row; the per-row sums become a batch of 0-d samples."""

    def forward(self, x, y):
        return (x * y).sum(1) / torch.maximum(torch.sqrt((x * x).sum(1) * (y * y).sum(1)), torch.tensor([1e-8]))


def test_a_vector_moved_into_the_batch_keeps_a_one_element_sample(tmp_path):
    torch.manual_seed(0)
    x, y = torch.rand(3, 8) - 0.5, torch.rand(1, 8) - 0.5
    base = tmp_path / "m"
    write_ncnn(capture(RowCosine(), (x, y)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    got = run_ncnn(base, [x, y])
    assert_close([got[0].reshape(3)], torch_outputs(RowCosine(), [x, y]), FP32, "row cosine")


class UnbindThenSqueeze(nn.Module):
    """torch.onnx's unbind of a vector reads back as one-element slices squeezed to 0-d."""

    def forward(self, x):
        return tuple(part.squeeze(0) for part in x.split(1, 0))


def test_a_squeeze_to_0d_is_a_one_element_blob(tmp_path):
    x = torch.rand(3) - 0.5
    base = tmp_path / "m"
    write_ncnn(capture(UnbindThenSqueeze(), (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    got = run_ncnn(base, [x])
    assert [float(g.reshape(())) for g in got] == [float(v) for v in x]
