"""ONNX lowerings of as_strided, pdist, cumprod, lgamma, adaptive max pooling with unequal
windows and fractional max pooling with fixed samples: captured from real modules, exported,
checked, run in onnxruntime and compared with torch."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from onnx_export_util import GraphMaker, assert_close, export_module, op_types
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import build_model
from pnnx_reference.errors import UnsupportedOperator


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class Pair(nn.Module):
    """A pooling module returning (values, indices), called as a submodule."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        y = self.m(x)
        return y[0], y[1]


def _check(model, inputs, tmp_path, op_type: str, atol: float = 1e-5, rtol: float = 1e-5):
    """Export, assert the graph holds `op_type`, compare onnxruntime with torch; the model."""
    got, want, onnx_model, graph = export_module(model.eval(), inputs, tmp_path)
    assert op_type in {op.type for op in graph.ops}
    assert len(got) == len(want)
    assert [g.dtype for g in got] == [w.dtype for w in want]
    assert_close(got, want, atol=atol, rtol=rtol)
    return onnx_model


def _unsupported(model, inputs, match: str):
    graph = capture(model.eval(), tuple(inputs))
    with pytest.raises(UnsupportedOperator, match=match):
        build_model(graph, fp16=False)


# --- torch.as_strided ---------------------------------------------------------------------

@pytest.mark.parametrize("shape, size, stride, offset", [
    ((3, 3), (2, 2), (1, 2), 0),
    ((12,), (2, 3), (3, 1), 2),
    ((16,), (5, 4), (2, 1), 0),              # overlapping windows
    ((3, 4), (4, 3), (1, 4), 0),             # a transpose
    ((1, 3, 4, 4), (1, 3, 2, 2), (48, 16, 4, 1), 1),
])
def test_as_strided(tmp_path, shape, size, stride, offset):
    model = Fn(lambda x: torch.as_strided(x, size, stride, offset))
    onnx_model = _check(model, [torch.randn(shape)], tmp_path, "torch.as_strided", 0, 0)
    assert "Gather" in op_types(onnx_model)


def test_as_strided_outside_the_input_is_refused():
    g = GraphMaker()
    x = g.input((3, 3))
    y = g.op("torch.as_strided", [x], [(2, 3)], {"size": [2, 3], "stride": [3, 3],
                                                 "storage_offset": 1})
    with pytest.raises(UnsupportedOperator, match="outside the input"):
        build_model(g.output(y), fp16=False)


# --- F.pdist ------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf"), 0.0])
def test_pdist(tmp_path, p):
    x = torch.randn(6, 5)
    x[4] = x[1]                     # a zero distance
    x[2, :2] = x[0, :2]             # some equal coordinates (p = 0 counts the others)
    _check(Fn(lambda t: F.pdist(t, p)), [x], tmp_path, "F.pdist")


def test_pdist_two_rows(tmp_path):
    _check(Fn(lambda t: F.pdist(t)), [torch.randn(2, 16)], tmp_path, "F.pdist")


# --- torch.cumprod ------------------------------------------------------------------------

@pytest.mark.parametrize("shape, dim", [((1, 3, 8, 8), 1), ((2, 13), -1), ((16,), 0),
                                        ((4, 5, 6), 0), ((2, 3, 4), 2)])
def test_cumprod(tmp_path, shape, dim):
    x = torch.empty(shape).uniform_(-1.5, 1.5)
    x.view(-1)[3] = 0.0             # a zero stops every later product
    onnx_model = _check(Fn(lambda t: torch.cumprod(t, dim)), [x], tmp_path, "torch.cumprod")
    assert "ReduceProd" in op_types(onnx_model)


def test_cumprod_integer(tmp_path):
    x = torch.randint(-3, 4, (4, 3))
    _check(Fn(lambda t: torch.cumprod(t, 0)), [x], tmp_path, "torch.cumprod", 0, 0)


def test_cumprod_dtype(tmp_path):
    _check(Fn(lambda t: torch.cumprod(t, 1, dtype=torch.float64)), [torch.rand(2, 5) + 0.5],
           tmp_path, "torch.cumprod", 1e-12, 1e-12)


def test_cumprod_tensor_method(tmp_path):
    _check(Fn(lambda t: t.cumprod(dim=-2)), [torch.rand(3, 7, 2) + 0.5], tmp_path,
           "Tensor.cumprod")


# --- torch.lgamma -------------------------------------------------------------------------

def test_lgamma_case_range(tmp_path):
    x = torch.empty(1, 3, 8, 8).uniform_(0.1, 5.0)
    x.view(-1)[:3] = torch.tensor([1.0, 2.0, 0.5])   # roots of lgamma and the reflection edge
    _check(Fn(torch.lgamma), [x], tmp_path, "torch.lgamma", 1e-6, 1e-6)


def test_lgamma_wide_range(tmp_path):
    positive = torch.logspace(-6, 6, 200)
    negative = -torch.linspace(0.01, 30.0, 200) - 0.003   # off the poles
    x = torch.cat([positive, negative])
    _check(Fn(torch.lgamma), [x], tmp_path, "torch.lgamma", 2e-5, 2e-6)


def test_lgamma_poles_are_infinite(tmp_path):
    x = torch.tensor([0.0, -1.0, -2.0, -7.0, 3.0])
    got, want, _, _ = export_module(Fn(torch.lgamma), [x], tmp_path)
    assert np.isposinf(got[0][:4]).all() and np.isposinf(want[0][:4]).all()
    assert math.isclose(float(got[0][4]), math.lgamma(3.0), rel_tol=1e-6)


def test_lgamma_tensor_method_float64(tmp_path):
    x = torch.rand(5, 4, dtype=torch.float64) * 10 - 4.5
    _check(Fn(lambda t: t.lgamma()), [x], tmp_path, "Tensor.lgamma", 1e-9, 1e-9)


# --- adaptive max pooling with unequal windows --------------------------------------------

@pytest.mark.parametrize("module, shape", [
    (nn.AdaptiveMaxPool2d(3), (1, 4, 9, 10)),
    (nn.AdaptiveMaxPool2d((4, 5)), (2, 3, 9, 10)),
    (nn.AdaptiveMaxPool2d((12, 13)), (1, 4, 9, 10)),      # output larger than the input
    (nn.AdaptiveMaxPool2d((None, 3)), (1, 2, 9, 10)),
    (nn.AdaptiveMaxPool2d(2), (3, 9, 11)),                 # unbatched
    (nn.AdaptiveMaxPool1d(5), (1, 4, 17)),
    (nn.AdaptiveMaxPool3d((3, 5, 4)), (1, 2, 5, 7, 6)),
])
def test_adaptive_max_pool_unequal_windows(tmp_path, module, shape):
    onnx_model = _check(module, [torch.randn(shape)], tmp_path, type_name(module), 0, 0)
    assert "MaxPool" not in op_types(onnx_model)


def test_adaptive_max_pool_functional(tmp_path):
    _check(Fn(lambda t: F.adaptive_max_pool2d(t, (7, 9))), [torch.randn(1, 4, 9, 11)], tmp_path,
           "F.adaptive_max_pool2d", 0, 0)


def test_adaptive_max_pool_divisible_keeps_maxpool(tmp_path):
    onnx_model = _check(nn.AdaptiveMaxPool2d(3), [torch.randn(1, 2, 9, 12)], tmp_path,
                        "nn.AdaptiveMaxPool2d", 0, 0)
    assert "MaxPool" in op_types(onnx_model)


def type_name(module) -> str:
    return f"nn.{type(module).__name__}"


@pytest.mark.parametrize("module, shape", [
    (nn.AdaptiveMaxPool2d(3, return_indices=True), (1, 4, 9, 10)),
    (nn.AdaptiveMaxPool1d(4, return_indices=True), (2, 3, 17)),
    (nn.AdaptiveMaxPool3d((3, 5, 4), return_indices=True), (1, 2, 5, 7, 6)),
    (nn.AdaptiveMaxPool2d((2, 3), return_indices=True), (3, 9, 10)),      # unbatched
])
def test_adaptive_max_pool_indices(tmp_path, module, shape):
    x = torch.randn(shape)
    x.view(-1)[:4] = 5.0        # a tie: torch keeps the first maximum in row-major order
    _check(Pair(module), [x], tmp_path, type_name(module), 0, 0)


def test_adaptive_max_pool_functional_indices(tmp_path):
    model = Fn(lambda t: F.adaptive_max_pool2d(t, (4, 5), return_indices=True))
    _check(model, [torch.randn(1, 3, 9, 11)], tmp_path, "F.adaptive_max_pool2d_with_indices", 0, 0)


# --- fractional max pooling with recorded samples -----------------------------------------

@pytest.mark.parametrize("n, shape, kernel, out", [
    (2, (1, 3, 9, 10), 2, 4),
    (2, (2, 5, 12, 11), 3, (5, 6)),
    (3, (1, 3, 9, 10, 8), 2, 4),
    (3, (2, 2, 8, 9, 7), 3, (5, 4, 3)),
])
def test_fractional_max_pool_module(tmp_path, n, shape, kernel, out):
    samples = torch.rand(shape[0], shape[1], n)    # a different window grid per plane
    cls = nn.FractionalMaxPool2d if n == 2 else nn.FractionalMaxPool3d
    module = cls(kernel, output_size=out, _random_samples=samples)
    _check(module, [torch.randn(shape)], tmp_path, type_name(module), 0, 0)


@pytest.mark.parametrize("n", [2, 3])
def test_fractional_max_pool_functional(tmp_path, n):
    shape = (1, 3) + (12,) * n
    fn = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
    samples = torch.tensor([0.1, 0.5, 0.9]).reshape(1, 3, 1).expand(1, 3, n).contiguous()
    model = Fn(lambda t: fn(t, 2, output_ratio=(0.5,) * n, _random_samples=samples))
    _check(model, [torch.randn(shape)], tmp_path, f"F.fractional_max_pool{n}d", 0, 0)


@pytest.mark.parametrize("n, shape, out", [(2, (2, 3, 9, 10), 5), (3, (1, 2, 9, 10, 8), (4, 5, 3))])
def test_fractional_max_pool_indices(tmp_path, n, shape, out):
    cls = nn.FractionalMaxPool2d if n == 2 else nn.FractionalMaxPool3d
    module = cls(2, output_size=out, return_indices=True,
                 _random_samples=torch.rand(shape[0], shape[1], n))
    _check(Pair(module), [torch.randn(shape)], tmp_path, type_name(module), 0, 0)


def test_fractional_max_pool_functional_indices(tmp_path):
    samples = torch.rand(1, 4, 2)
    model = Fn(lambda t: F.fractional_max_pool2d(t, 3, output_size=(5, 4), return_indices=True,
                                                 _random_samples=samples))
    _check(model, [torch.randn(1, 4, 12, 11)], tmp_path, "F.fractional_max_pool2d_with_indices",
           0, 0)


def test_fractional_max_pool_runtime_samples_are_refused():
    model = Fn(lambda t, u: F.fractional_max_pool2d(t, 2, output_size=(4, 4), _random_samples=u))
    _unsupported(model, [torch.randn(1, 2, 12, 12), torch.rand(1, 2, 2)], "not a constant")


# --- torch.fft.* (complex tensors as trailing (real, imaginary) pairs) --------------------

def _run_complex(model, inputs, tmp_path):
    """write_onnx (checker included), run in onnxruntime through the conformance backend,
    which views the outputs the metadata names complex as complex; (outputs, torch outputs,
    model)."""
    import onnx

    from conformance_runs import run_onnx
    from pnnx_reference.emit.onnx import write_onnx

    with torch.no_grad():
        want = model(*inputs)
    want = [w.resolve_conj().resolve_neg().numpy() for w in
            (want if isinstance(want, tuple) else (want,))]
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(capture(model.eval(), tuple(inputs)), path, fp16=False)
    return run_onnx(path, inputs), want, onnx.load(path)


def _fft_close(model, inputs, tmp_path, atol=1e-4):
    got, want, onnx_model = _run_complex(model, inputs, tmp_path)
    assert [np.iscomplexobj(g) for g in got] == [np.iscomplexobj(w) for w in want]
    assert_close(got, want, atol=atol, rtol=1e-4)
    return onnx_model


@pytest.mark.parametrize("fn, shape", [
    (lambda x: torch.fft.fft(x), (4, 16)),
    (lambda x: torch.fft.fft(x, n=20, norm="ortho"), (2, 13)),
    (lambda x: torch.fft.ifft(x, n=5, dim=0, norm="forward"), (8, 3)),
    (lambda x: torch.fft.fft2(x, s=(10, 12)), (1, 8, 8)),
    (lambda x: torch.fft.ifftn(x, dim=(0, 2)), (4, 3, 6)),
    (lambda x: torch.fft.rfft(x), (4, 16)),
    (lambda x: torch.fft.rfft2(x, dim=(0, 1), norm="ortho"), (6, 4, 3)),
    (lambda x: torch.fft.rfftn(x, s=(6, 10), dim=(1, 2)), (1, 4, 8)),
    (lambda x: torch.fft.irfft(x), (4, 9)),
    (lambda x: torch.fft.irfft(x, n=7, dim=0), (8, 3)),
    (lambda x: torch.fft.irfftn(x, s=(6, 10), dim=(1, 2)), (1, 4, 8)),
    (lambda x: torch.fft.hfft(x, n=20), (2, 13)),
    (lambda x: torch.fft.hfft2(x, norm="ortho"), (4, 13)),
    (lambda x: torch.fft.ihfft(x, norm="forward"), (16,)),
    (lambda x: torch.fft.ihfftn(x, dim=(-2, -1)), (2, 3, 8, 8)),
    (lambda x: torch.fft.fft(x).abs(), (2, 3, 8)),
])
def test_fft_real_input(tmp_path, fn, shape):
    onnx_model = _fft_close(Fn(fn), [torch.randn(shape)], tmp_path)
    assert "DFT" in op_types(onnx_model)


@pytest.mark.parametrize("fn", [
    lambda z: torch.fft.fft(z), lambda z: torch.fft.ifft2(z), lambda z: torch.fft.irfft(z),
    lambda z: torch.fft.hfftn(z), lambda z: torch.fft.fftn(z, s=(3, 5), norm="ortho"),
])
def test_fft_complex_input(tmp_path, fn):
    model = Fn(lambda re, im: fn(torch.complex(re, im)))
    _fft_close(model, [torch.randn(4, 8), torch.randn(4, 8)], tmp_path)


def test_complex_parts(tmp_path):
    def parts(x):
        y = torch.fft.fft(x)
        return y.real, y.imag, y.conj(), torch.view_as_real(y)
    got, want, _ = _run_complex(Fn(parts), [torch.randn(3, 8)], tmp_path)
    assert_close(got, want, atol=1e-5, rtol=1e-7)  # numpy's assert_allclose default rtol
    assert not np.iscomplexobj(got[3]) and got[3].shape == (3, 8, 2)


def test_complex_output_is_marked(tmp_path):
    _, _, onnx_model = _run_complex(Fn(lambda x: (x + 1, torch.fft.rfft(x))), [torch.randn(8)],
                                    tmp_path)
    props = {p.key: p.value for p in onnx_model.metadata_props}
    assert props["pnnx.complex_outputs"] == "1"
    out = onnx_model.graph.output[1].type.tensor_type
    assert [d.dim_value for d in out.shape.dim] == [5, 2]


def test_complex_arithmetic(tmp_path):
    def rope_like(x, f):
        rotated = torch.view_as_complex(x) * torch.view_as_complex(f)
        return torch.view_as_real(rotated * 0.5 - torch.fft.fft(f[..., 0])).flatten(-2)
    _fft_close(Fn(rope_like), [torch.randn(2, 4, 8, 2), torch.randn(4, 8, 2)], tmp_path)


def test_complex_operand_of_an_ordinary_op_is_refused():
    _unsupported(Fn(lambda x: torch.fft.fft(x).exp()), [torch.randn(8)], "on complex operands")


# --- lp pooling that ONNX LpPool cannot express ---------------------------------------------

@pytest.mark.parametrize("module, shape", [(nn.LPPool2d(3, 3, stride=2, ceil_mode=True), (1, 4, 9, 11)),
                                           (nn.LPPool1d(2, 2, ceil_mode=True), (2, 3, 9)),
                                           (nn.LPPool2d(1.5, 2), (1, 3, 8, 6))])
def test_lp_pool_with_ceil_mode_or_a_fractional_p_is_torchs_formula(tmp_path, module, shape):
    """A partial window's mean times the full kernel size (ceil_mode), or p not an integer:
    x ** p, AveragePool, then (sign * relu(abs) * kernel volume) ** (1 / p), as torch does."""
    onnx_model = _check(module, [torch.rand(shape)], tmp_path, type(module).__name__.join(("nn.", "")))
    assert "LpPool" not in {node.op_type for node in onnx_model.graph.node}
