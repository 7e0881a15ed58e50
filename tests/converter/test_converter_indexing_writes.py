"""Tensor indexing, writes through indices and the small Tensor API gaps: what the capture
records, and that the regenerated `_pnnx.py` (also after a pnnx.param round trip) reproduces
eager bit for bit."""
from __future__ import annotations

import pytest
import torch

from converter_helpers import check_links, op_of
from script_modules import import_file
from fn_modules import Fn
from pnnx_reference import api
from pnnx_reference.emit import regenerate, write_python
from pnnx_reference.errors import ConversionError
from pnnx_reference.formats import pnnx_param


def _round_trip(tmp_path, fn, *inputs, optlevel=2):
    """The captured graph, after checking both generated models against eager."""
    expected = fn(*[t.clone() for t in inputs])
    graph = api.capture(Fn(fn), [t.clone() for t in inputs], optlevel=optlevel)
    check_links(graph)
    param, bin_ = tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin"
    pnnx_param.save(graph, param, bin_)
    write_python(graph, tmp_path / "m_pnnx.py", bin_)
    again = regenerate(param, tmp_path / "again_pnnx.py")
    for i, py in enumerate((tmp_path / "m_pnnx.py", again)):
        net = import_file(py, f"indexing_writes_{tmp_path.name}_{i}").Model().eval()
        with torch.no_grad():
            out = net(*[t.clone() for t in inputs])
        out, exp = (out, expected) if isinstance(expected, tuple) else ((out,), (expected,))
        assert all(a.dtype == e.dtype and torch.equal(a, e) for a, e in zip(out, exp))
    return graph


X = torch.rand(3, 4, 5)
IDX = torch.tensor([2, 0, 1])


@pytest.mark.parametrize("fn, index, expr", [
    (lambda x, m: x[m], X > 0.5, "[@1]"),
    (lambda x, i: x[:, i], IDX, "[None,@1]"),
    (lambda x, i: x[..., i], IDX, "[None,None,@1]"),
    (lambda x, i: x[i, 1], IDX, "[@1]"),  # the integer selects first, as torch applies it
    (lambda x, i: x[i, ...], IDX, "[@1]"),
])
def test_tensor_index(tmp_path, fn, index, expr):
    graph = _round_trip(tmp_path, fn, X, index)
    op = op_of(graph, "Tensor.index")
    assert op.params == {"expr": expr} and op.inputnames[:2] == ["input", "indices"]


@pytest.mark.parametrize("fn, types", [
    (lambda x, i: x[1:, i], ["Tensor.slice", "Tensor.index"]),
    (lambda x, i: x[:, None, 1:3, i], ["Tensor.slice", "torch.unsqueeze", "Tensor.index"]),
    (lambda x, i: x[None, ..., None], ["torch.unsqueeze", "torch.unsqueeze"]),
    (lambda x, i: x[[0, 2], :, [1, 1]], ["Tensor.index"]),
    (lambda x, i: x[i, 2:, None], ["Tensor.slice", "torch.unsqueeze", "Tensor.index"]),
])
def test_mixed_index_split_as_torch_applies_it(tmp_path, fn, types):
    """Issue 19, item 6: slices and None next to index tensors and lists are a Tensor.slice,
    a torch.unsqueeze per new axis and a Tensor.index, in the order a traced .pt has them."""
    graph = _round_trip(tmp_path, fn, X, IDX)
    assert [op.type for op in graph.ops if op.type in ("Tensor.slice", "torch.unsqueeze", "Tensor.index")] == types


def _write_slice(x, y):
    x = x * 2
    x[..., :2] = y
    return x + 1


def test_slice_assignment_becomes_slice_copy(tmp_path):
    graph = _round_trip(tmp_path, _write_slice, X, torch.rand(3, 4, 2))
    op = op_of(graph, "Tensor.slice_copy")
    assert op.inputnames == ["input", "src"]
    assert op.params == {"dims": [-1], "starts": [0], "ends": [2], "steps": [1], "selects": [2147483647]}


def _write_select_scalar(x):
    x = x.clone()
    x[:, 0] = 3.0
    return x


def test_select_assignment_of_a_scalar(tmp_path):
    op = op_of(_round_trip(tmp_path, _write_select_scalar, X), "Tensor.slice_copy")
    assert op.params["selects"] == [0]


def _write_mask(x, m):
    z = x + 1
    z[m] = 0.5
    return z, x


@pytest.mark.parametrize("optlevel", [0, 2])
def test_mask_assignment_becomes_index_put(tmp_path, optlevel):
    graph = _round_trip(tmp_path, _write_mask, X, X > 0.5, optlevel=optlevel)
    op = op_of(graph, "Tensor.index_put")
    assert op.inputnames == ["input", "indices", "values"] and op.params == {"accumulate": False}


def _write_view(x):
    x = x.clone()
    x.transpose(0, 1)[0] = 1.0
    return x


def test_assignment_into_a_view_is_refused():
    with pytest.raises(ConversionError, match="view"):
        api.capture(Fn(_write_view), [X])


def _write_slices_of_slices(x):
    """Issue 34: in-place arithmetic on slices of slices, each written back into x."""
    x = x * 1
    x[:, :2][0] = 1.0
    xx = x[1]
    xx[..., 1] = xx[..., -1] * 3
    x[:, 1:, ::2].clamp_(0, 0.5)
    x[:, 1:][0].fill_(-2.0)
    return x


@pytest.mark.parametrize("optlevel", [0, 2])
def test_writes_into_slices_of_slices_reach_the_tensor(tmp_path, optlevel):
    _round_trip(tmp_path, _write_slices_of_slices, X, optlevel=optlevel)


def _copy(x, y):
    return (x * 1).copy_(y)


@pytest.mark.parametrize("fn, op_type", [
    (lambda x: x[0].T, "Tensor.permute"),
    (lambda x: x.mT, "torch.transpose"),
    (lambda x: torch.where(x > 0.5, 1.0, 0), "torch.where"),
    (lambda x: torch.where(x > 0.5, x, 0.25), "torch.where"),
])
def test_small_api_gaps(tmp_path, fn, op_type):
    op_of(_round_trip(tmp_path, fn, X), op_type)


def test_copy_passes_src(tmp_path):
    op = op_of(_round_trip(tmp_path, _copy, X, torch.rand(3, 4, 5)), "Tensor.copy")
    assert op.inputnames == ["input", "src"]


def test_to_other_tensor(tmp_path):
    op = op_of(_round_trip(tmp_path, lambda x, i: x.to(i), X, IDX), "Tensor.to")
    assert op.inputnames == ["input", "other"]


def _nested_constant(x):
    return x * torch.tensor([[5.0], [3.0], [1.0]])


def test_nested_literal_tensor_becomes_a_constant(tmp_path):
    graph = _round_trip(tmp_path, _nested_constant, X[0, :3], optlevel=0)
    assert "torch.tensor" not in [op.type for op in graph.ops]
    assert any(op.type == "pnnx.Attribute" for op in graph.ops)
