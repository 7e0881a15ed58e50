"""torch.stft (ONNX STFT) and torch.istft (inverse real DFT MatMul + ConvTranspose overlap-add
+ window envelope): captured, exported, checked, run in onnxruntime and compared with torch
at the onnxruntime fp32 tolerance. Complex results are read through view_as_real, or viewed
as complex through the model's pnnx.complex_outputs metadata (a complex operand is carried
with a trailing axis of 2, which check_shapes allows for)."""
from __future__ import annotations

import onnx
import pytest
import torch

from conformance_runs import run_onnx
from fn_modules import FnOf
from onnx_export_util import assert_close, check_shapes, op_types
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import write_onnx
from pnnx_reference.errors import UnsupportedOperator

TOL = dict(atol=1e-4, rtol=1e-4)


def _export(model, inputs, tmp_path):
    """Capture, write_onnx (fp16 weights), ONNX checker, strict shape inference against the
    operand shapes, onnxruntime; returns (outputs, torch outputs, the ONNX model)."""
    graph = capture(model, tuple(inputs))
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(graph, path, fp16=True)
    onnx_model = onnx.load(path)
    onnx.checker.check_model(onnx_model, full_check=True)
    check_shapes(onnx_model, graph)
    got = run_onnx(path, inputs)
    with torch.no_grad():
        want = model(*inputs)
    return got, want.numpy(), onnx_model


def _assert_close(got, want):
    assert_close(got, [want], **TOL)


def _signal(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape)


def _stft_real(n_fft, hop, window=None, **kw):
    """view_as_real(stft(x)): the (real, imaginary) pairs as a real output."""
    return FnOf(lambda m, x: torch.view_as_real(
        torch.stft(x, n_fft, hop, window=getattr(m, "win", None), return_complex=True, **kw)),
        **({} if window is None else {"win": window}))


@pytest.mark.parametrize("name, model, shape", [
    ("hann", _stft_real(16, 4, torch.hann_window(16)), (1, 64)),
    ("center_false", _stft_real(16, 4, torch.hann_window(16), center=False), (1, 80)),
    ("reflect_normalized_batch", _stft_real(16, 8, torch.hann_window(16), normalized=True), (2, 64)),
    ("twosided_unbatched", _stft_real(12, 3, torch.hann_window(12), onesided=False), (60,)),
    ("win_length", _stft_real(16, 4, torch.hann_window(12), win_length=12), (1, 64)),
    ("constant_pad_blackman", _stft_real(16, 4, torch.blackman_window(16), pad_mode="constant"), (1, 50)),
    ("replicate_pad_no_window", _stft_real(32, 8, pad_mode="replicate"), (1, 100)),
])
def test_stft(tmp_path, name, model, shape):
    got, want, onnx_model = _export(model, [_signal(*shape)], tmp_path)
    _assert_close(got, want)
    assert "STFT" in op_types(onnx_model)


def test_stft_magnitude(tmp_path):
    model = FnOf(lambda m, x: torch.stft(x, 32, 8, window=m.win, return_complex=True).abs(), win=torch.hann_window(32))
    got, want, _ = _export(model, [_signal(2, 128)], tmp_path)
    _assert_close(got, want)


def test_stft_complex_output_is_marked(tmp_path):
    """A complex graph output is real with a trailing (real, imaginary) axis, named in metadata."""
    x = _signal(1, 64)
    model = FnOf(lambda m, x: torch.stft(x, 16, 4, window=m.win, return_complex=True), win=torch.hann_window(16))
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(capture(model, (x,)), path, fp16=True)
    onnx_model = onnx.load(path)
    assert {p.key: p.value for p in onnx_model.metadata_props}.get("pnnx.complex_outputs") == "0"
    assert onnx_model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value == 2
    got = run_onnx(path, [x])  # the backend reads output 0 as complex by that metadata
    with torch.no_grad():
        want = model(x).numpy()
    assert got[0].dtype.kind == "c"
    assert_close(got, [want], **TOL)


def _roundtrip(n_fft, hop, window, stft_kw=None, **istft_kw):
    def fn(m, x):
        spec = torch.stft(x, n_fft, hop, window=m.win, return_complex=True, **(stft_kw or {}))
        return torch.istft(spec, n_fft, hop, window=m.win, **istft_kw)
    return FnOf(fn, win=window)


@pytest.mark.parametrize("name, model, shape", [
    ("roundtrip", _roundtrip(16, 4, torch.hann_window(16)), (1, 64)),
    ("length_trim_batch", _roundtrip(16, 4, torch.hann_window(16), length=60), (2, 64)),
    ("length_beyond_signal", _roundtrip(16, 4, torch.hann_window(16), length=70), (1, 64)),
    ("length_past_overlap_add", _roundtrip(16, 4, torch.hann_window(16), length=80), (1, 64)),
    ("normalized", _roundtrip(32, 8, torch.hann_window(32), {"normalized": True}, normalized=True), (1, 128)),
    ("twosided_unbatched", _roundtrip(16, 4, torch.hann_window(16), {"onesided": False}, onesided=False), (64,)),
    ("odd_n_fft_hamming", _roundtrip(15, 5, torch.hamming_window(15)), (1, 90)),
    ("win_length", _roundtrip(16, 4, torch.hann_window(12), {"win_length": 12}, win_length=12), (1, 64)),
])
def test_istft(tmp_path, name, model, shape):
    got, want, onnx_model = _export(model, [_signal(*shape)], tmp_path)
    _assert_close(got, want)
    assert {"MatMul", "ConvTranspose"} <= set(op_types(onnx_model))


def test_istft_of_torch_complex(tmp_path):
    spec = torch.stft(_signal(48), 16, 4, window=torch.hann_window(16), return_complex=True)
    model = FnOf(lambda m, re, im: torch.istft(torch.complex(re, im), 16, 4, window=m.win), win=torch.hann_window(16))
    got, want, _ = _export(model, [spec.real.contiguous(), spec.imag.contiguous()], tmp_path)
    _assert_close(got, want)


def test_istft_of_non_hermitian_twosided_spectrum(tmp_path):
    """torch's real istft reads the first n_fft/2+1 bins of a two-sided spectrum only."""
    torch.manual_seed(0)
    parts = [torch.randn(16, 17), torch.randn(16, 17)]
    model = FnOf(lambda m, re, im: torch.istft(torch.complex(re, im), 16, 4, window=m.win, onesided=False),
                 win=torch.hann_window(16))
    got, want, _ = _export(model, parts, tmp_path)
    _assert_close(got, want)


def test_non_constant_window_is_refused(tmp_path):
    model = FnOf(lambda m, x, w: torch.view_as_real(torch.stft(x, 16, 4, window=w, return_complex=True)))
    graph = capture(model, (_signal(1, 64), torch.hann_window(16)))
    with pytest.raises(UnsupportedOperator, match="window is not a constant"):
        write_onnx(graph, tmp_path / "m.pnnx.onnx")
