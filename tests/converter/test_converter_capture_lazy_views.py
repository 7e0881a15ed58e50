"""Capture gaps closed by the tracer: lazy modules that were never run (materialised by one
plain forward first) and in-place ops on a slice (`y[:, :2].fill_(v)`), recorded as the op on
the slice's value plus a `Tensor.slice_copy` write-back."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from converter_helpers import check_links, types
from script_modules import import_file
from pnnx_reference import api
from pnnx_reference.frontends.python import trace
from pnnx_reference.emit import write_python
from pnnx_reference.errors import ConversionError
from pnnx_reference.formats import pnnx_param


def _generated(tmp_path, graph, name):
    param, bin_ = tmp_path / f"{name}.pnnx.param", tmp_path / f"{name}.pnnx.bin"
    pnnx_param.save(graph, param, bin_)
    write_python(graph, tmp_path / f"{name}_pnnx.py", bin_)
    return import_file(tmp_path / f"{name}_pnnx.py", f"lazy_views_{tmp_path.name}_{name}").Model().eval()


def _converts_exactly(tmp_path, model, *inputs):
    """The graph of `model`, after checking its `_pnnx.py` against eager bit for bit."""
    graph = api.capture(model, [t.clone() for t in inputs])
    check_links(graph)
    with torch.no_grad():
        expected = model(*[t.clone() for t in inputs])
        got = _generated(tmp_path, graph, "m")(*[t.clone() for t in inputs])
    assert torch.equal(got, expected)
    return graph


@pytest.mark.parametrize("lazy, plain, shape", [
    (lambda: nn.LazyConv2d(8, 3), nn.Conv2d, (1, 4, 9, 10)),
    (lambda: nn.LazyConvTranspose1d(5, 3), nn.ConvTranspose1d, (2, 3, 7)),
    (lambda: nn.LazyLinear(6), nn.Linear, (2, 12)),
])
def test_uninitialized_lazy_module_converts_as_its_plain_class(tmp_path, lazy, plain, shape):
    torch.manual_seed(0)
    model = nn.Sequential(lazy(), nn.ReLU()).eval()
    assert model[0].has_uninitialized_params()
    graph = _converts_exactly(tmp_path, model, torch.rand(shape))
    assert f"nn.{plain.__name__}" in types(graph)
    assert type(model[0]) is plain


def test_lazy_module_that_cannot_run_is_one_clear_error():
    with pytest.raises(ConversionError, match="cannot run on the given inputs"):
        trace(nn.LazyConv2d(8, 3), torch.rand(4, 2))  # a 2-d input: conv2d wants 3-d or 4-d


class CopyIntoSlice(nn.Module):
    def forward(self, x0, x1):
        y = x0 * 1.0
        y[:, :2].copy_(x1)
        return y


class FillSlice(nn.Module):
    def forward(self, x0):
        y = x0 + 0.0
        y[:, 1:3].fill_(-1.0)
        return y * 2


class TwiceIntoOneSlice(nn.Module):
    def forward(self, x0):
        y = x0 * 1.0
        s = y[1, ::2]
        s.mul_(3.0)
        s.add_(1.0)
        return y, s


def test_copy_into_a_slice_is_a_slice_copy_of_the_source(tmp_path):
    x0, x1 = torch.rand(2, 6), torch.rand(2, 2)
    graph = _converts_exactly(tmp_path, CopyIntoSlice(), x0, x1)
    assert "Tensor.slice_copy" in types(graph) and "Tensor.copy" not in types(graph)


def test_fill_on_a_slice_is_written_back(tmp_path):
    graph = _converts_exactly(tmp_path, FillSlice(), torch.rand(2, 5, 4))
    assert {"Tensor.fill", "Tensor.slice_copy"} <= set(types(graph))


def test_two_inplace_ops_on_one_slice_chain_their_write_backs(tmp_path):
    x0 = torch.rand(3, 5)
    model = TwiceIntoOneSlice()
    graph = api.capture(model, [x0.clone()])
    check_links(graph)
    with torch.no_grad():
        expected = model(x0.clone())
        got = _generated(tmp_path, graph, "m")(x0.clone())
    assert all(torch.equal(a, e) for a, e in zip(got, expected))


def test_copy_into_a_slice_with_broadcast_source_keeps_the_copy(tmp_path):
    class Broadcast(nn.Module):
        def forward(self, x0, x1):
            y = x0 * 1.0
            y[:, 1:4].copy_(x1)
            return y

    graph = _converts_exactly(tmp_path, Broadcast(), torch.rand(2, 6), torch.rand(3))
    assert {"Tensor.copy", "Tensor.slice_copy"} <= set(types(graph))


@pytest.mark.parametrize("forward", [
    lambda x: x.t()[:2].fill_(0.0),         # a slice of a transpose
    lambda x: x.t().mul_(2.0),              # a transpose itself
])
def test_inplace_on_other_views_is_refused(forward):
    class Model(nn.Module):
        def forward(self, x):
            y = x * 1.0
            forward(y)
            return y

    with pytest.raises(ConversionError, match="in-place .* on a view .* not supported by the capture yet"):
        trace(Model(), torch.rand(3, 4))
