"""Norms whose batch follows the input (inputshape2, or an ONNX file with a symbolic batch, as
upstream's ONNX tests of normalisation operators export them with dynamic axes): the emitter
tiled the per-channel parameters over an N held in the blob, N being -1 ("internal error in the
converter: ValueError: negative dimensions are not allowed"); the batch is now the ncnn Mat batch
and each sample is normalised on its own, at any batch size."""
from __future__ import annotations

import contextlib
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference import api
from pnnx_reference.emit.ncnn import write_ncnn


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.bn = nn.BatchNorm2d(12)
        self.bn.running_mean.uniform_()
        self.bn.running_var.uniform_(0.5, 2)
        self.gn = nn.GroupNorm(3, 12)
        self.inorm = nn.InstanceNorm1d(12, affine=True)

    def forward(self, x, y):
        a = self.gn(self.bn(x))
        b = F.local_response_norm(self.inorm(y), 3)
        return a, b


SHAPES = [(1, 12, 6, 8), (1, 12, 10)]


def _inputs(batch: int, seed: int):
    torch.manual_seed(seed)
    return [torch.rand(batch, *s[1:]) for s in SHAPES]


@pytest.mark.parametrize("batch", [1, 3])
def test_norms_of_a_dynamic_batch_run_at_any_batch(tmp_path, batch):
    model = Norms().eval()
    graph = api.capture(model, tuple(_inputs(1, 0)), inputs2=tuple(_inputs(2, 0)))
    base = tmp_path / "m"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    inputs = _inputs(batch, 1)
    assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, f"batch {batch}")


def test_an_onnx_file_with_a_symbolic_batch_converts(tmp_path):
    """The ONNX door: torch.onnx.export with the batch as a dynamic axis, `pnnxref m.onnx inputshape=...`."""
    model = Norms().eval()
    names = ["x", "y"]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(_inputs(1, 0)), str(tmp_path / "m.onnx"), dynamo=False, opset_version=18,
                          input_names=names, dynamic_axes={n: {0: "n"} for n in names})
    api.export_onnx(str(tmp_path / "m.onnx"), input_shapes=[list(s) for s in SHAPES], out_dir=tmp_path, name="m", fp16=False)
    for batch in (1, 3):
        inputs = _inputs(batch, 2)
        assert_close(run_ncnn(tmp_path / "m", inputs, "fp32"), torch_outputs(model, inputs), FP32, f"batch {batch}")
