"""torch.stft / torch.istft lowered to ncnn Spectrogram / InverseSpectrogram: captured, lowered,
run on ncnn CPU in fp32 and compared with torch. A complex result is an ncnn blob with a
trailing (real, imaginary) axis of 2, compared with torch.view_as_real of torch's result."""
from __future__ import annotations

import pytest
import torch

from fn_modules import FnOf
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param


def _export(model, inputs, tmp_path):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return base


def _layers(base) -> dict[str, dict]:
    return {layer.type: layer.params for layer in ncnn_param.load(f"{base}.ncnn.param").layers}


def _check(model, inputs, tmp_path, layer: str) -> dict:
    """Export, run on ncnn (fp32), compare with torch (complex as (real, imag) pairs);
    returns the params of the `layer` that must have been emitted."""
    model = model.eval()
    with torch.no_grad():
        want = model(*inputs)
    want = (torch.view_as_real(want) if want.is_complex() else want).numpy()
    base = _export(model, inputs, tmp_path)
    layers = _layers(base)
    assert layer in layers, layers
    got = run_ncnn(base, inputs)[0]
    assert_close([got.reshape(want.shape) if got.size == want.size else got], [want], FP32, layer)
    return layers[layer]


def _signal(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape)


def _stft(n_fft, hop, window=None, **kw):
    return FnOf(lambda m, x: torch.stft(x, n_fft, hop, window=getattr(m, "win", None), return_complex=True, **kw),
                **({} if window is None else {"win": window}))


@pytest.mark.parametrize("name, model, shape, params", [
    ("hann", _stft(16, 4, torch.hann_window(16)), (1, 64), {4: 1, 5: 1, 6: 2, 8: 1}),
    ("hamming_center_false", _stft(16, 4, torch.hamming_window(16), center=False), (1, 80), {4: 2, 5: 0}),
    ("rectangular_constant_pad", _stft(12, 3, torch.ones(12), pad_mode="constant"), (1, 50), {4: 0, 6: 0}),
    ("win_length_normalized", _stft(16, 4, torch.hann_window(12), win_length=12, normalized=True), (1, 64),
     {3: 12, 7: 1}),
    ("twosided_batchless", _stft(12, 3, torch.hann_window(12), onesided=False), (60,), {8: 0}),
    ("batch_of_signals", _stft(16, 8, torch.hann_window(16)), (3, 64), {0: 16, 2: 8}),
])
def test_stft(tmp_path, name, model, shape, params):
    got = _check(model, [_signal(*shape)], tmp_path, "Spectrogram")
    assert {k: got[k] for k in params} == params, got


def test_stft_as_real_is_the_same_blob(tmp_path):
    win = torch.hann_window(16)
    model = FnOf(lambda m, x: torch.view_as_real(torch.stft(x, 16, 4, window=m.win, return_complex=True)), win=win)
    _check(model, [_signal(1, 48)], tmp_path, "Spectrogram")


def test_stft_magnitude_uses_power_1(tmp_path):
    model = FnOf(lambda m, x: torch.stft(x, 32, 8, window=m.win, return_complex=True).abs(), win=torch.hann_window(32))
    assert _check(model, [_signal(2, 128)], tmp_path, "Spectrogram")[1] == 1


@pytest.mark.parametrize("name, n_fft, hop, kw, shape", [
    ("roundtrip", 16, 4, {}, (1, 64)),
    ("normalized", 32, 8, {"normalized": True}, (1, 128)),
    ("twosided_batchless", 16, 4, {"onesided": False}, (64,)),
    ("length_trim_batch", 16, 4, {"length": 60}, (2, 64)),
    ("length_extend", 16, 4, {"length": 70}, (1, 64)),
])
def test_istft_roundtrip(tmp_path, name, n_fft, hop, kw, shape):
    length = kw.pop("length", None)

    def fn(m, x):
        spec = torch.stft(x, n_fft, hop, window=m.win, return_complex=True, **kw)
        return torch.istft(spec, n_fft, hop, window=m.win, length=length, **kw)
    got = _check(FnOf(fn, win=torch.hann_window(n_fft)), [_signal(*shape)], tmp_path, "InverseSpectrogram")
    assert got[1] == 1  # the real part only


def test_istft_of_torch_complex(tmp_path):
    """A spectrum built with torch.complex (real, imag blobs stacked on a trailing axis)."""
    spec = torch.stft(_signal(48), 16, 4, window=torch.hann_window(16), return_complex=True)
    model = FnOf(lambda m, re, im: torch.istft(torch.complex(re, im), 16, 4, window=m.win), win=torch.hann_window(16))
    _check(model, [spec.real.contiguous(), spec.imag.contiguous()], tmp_path, "InverseSpectrogram")


def test_istft_of_non_hermitian_twosided_spectrum(tmp_path):
    """torch's real istft reads the first n_fft/2+1 bins of a two-sided spectrum only."""
    torch.manual_seed(0)
    parts = [torch.randn(16, 17), torch.randn(16, 17)]
    model = FnOf(lambda m, re, im: torch.istft(torch.complex(re, im), 16, 4, window=m.win, onesided=False),
                 win=torch.hann_window(16))
    _check(model, parts, tmp_path, "InverseSpectrogram")


def test_unknown_window_is_refused(tmp_path):
    model = _stft(16, 4, torch.blackman_window(16))
    with pytest.raises(UnsupportedOperator) as info:
        _export(model.eval(), [_signal(1, 64)], tmp_path)
    assert "not a periodic hann, periodic hamming or rectangular window" in str(info.value)


def test_symmetric_hann_is_refused(tmp_path):
    """ncnn computes the periodic hann window; the symmetric one differs in every value."""
    model = _stft(16, 4, torch.hann_window(16, periodic=False))
    with pytest.raises(UnsupportedOperator):
        _export(model.eval(), [_signal(1, 64)], tmp_path)


def test_complex_output_layout(tmp_path):
    """The spectrogram blob is (freqs, frames, 2): real at [..., 0], imaginary at [..., 1]."""
    x = _signal(1, 64)
    base = _export(_stft(16, 4, torch.hann_window(16)).eval(), [x], tmp_path)
    got = run_ncnn(base, [x])[0]
    want = torch.stft(x[0], 16, 4, window=torch.hann_window(16), return_complex=True).numpy()
    assert_close([got[0, ..., 0] + 1j * got[0, ..., 1]], [want], FP32)


def test_complex_arithmetic_is_refused_not_miscomputed(tmp_path):
    """A complex blob is its (..., 2) real view: an operator that is not written for that layout
    (here a complex product) must be refused rather than computed on the pairs."""
    window = torch.hann_window(16)

    class Square(torch.nn.Module):
        def forward(self, x):
            s = torch.stft(x, 16, 4, window=window, return_complex=True)
            return torch.view_as_real(s * s)

    graph = capture(Square(), (torch.rand(1, 64),))
    with pytest.raises(UnsupportedOperator, match="no complex arithmetic"):
        write_ncnn(graph, tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py")


def test_zero_dim_complex_output_is_refused(tmp_path):
    """A complex scalar would be the ncnn blob (real, imag) of shape (2,), but pnnx.param writes
    no annotation for a 0-d operand: nothing would tell a reader it is complex. A complex
    vector keeps its annotation and is exported."""
    graph = capture(FnOf(lambda m, x: torch.view_as_complex(x)), (torch.rand(2),))
    with pytest.raises(UnsupportedOperator, match="0-d complex output"):
        write_ncnn(graph, tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py")
    _export(FnOf(lambda m, x: torch.view_as_complex(x)).eval(), [torch.rand(3, 2)], tmp_path)
