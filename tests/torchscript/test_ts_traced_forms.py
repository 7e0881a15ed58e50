"""Issue 33, items 16-18 and 20: traced models written as upstream's users write them, which
upstream converts: tuple and list inputs unpacked inside, in-place copies into views of an
input, slice ends that follow the input's size, and values computed from an input at run time."""
import warnings
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

from pnnx_reference.cli import main
from pnnx_reference.formats import pnnx_param


def trace(model, inputs, path: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(model, inputs, check_trace=False).save(str(path))
    return path


def run_pnnx_py(py: Path, *inputs):
    """The generated _pnnx.py's Model on `inputs`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(py.stem, py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.Model().eval()
    with torch.no_grad():
        return net(*inputs)


def input_count(param: Path) -> int:
    return sum(op.type == "pnnx.Input" for op in pnnx_param.load_text(param).ops)


class TupleInput(nn.Module):
    def forward(self, xs):
        a, b = xs
        return a * 2 + b


class ListInput(nn.Module):
    def forward(self, x, ys):
        a, b = ys
        return x + a * b


def _unpack_three(xs):
    a, b, c = xs
    return a * 2 + b - c


def test_a_tuple_input_unpacked_inside_is_fed_flattened(tmp_path, capsys):
    """The tuple was fed as its first tensor (unbound into rows) and the second dropped: a
    model that computed something else, with the self-check passing."""
    torch.manual_seed(0)
    a, b = torch.rand(2, 3), torch.rand(2, 3)
    pt = trace(TupleInput(), ((a, b),), tmp_path / "tup.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    assert input_count(tmp_path / "tup.pnnx.param") == 2
    assert torch.equal(run_pnnx_py(tmp_path / "tup_pnnx.py", a, b), a * 2 + b)
    assert "FLOPS = 12\n" in capsys.readouterr().err  # upstream's count on this model


def test_a_list_input_and_a_traced_function(tmp_path, capsys):
    torch.manual_seed(0)
    x, a, b = torch.rand(2, 3), torch.rand(2, 3), torch.rand(2, 3)
    pt = trace(ListInput(), (x, [a, b]), tmp_path / "lst.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    assert torch.equal(run_pnnx_py(tmp_path / "lst_pnnx.py", x, a, b), x + a * b)
    fn = trace(_unpack_three, ([x, a, b],), tmp_path / "fn.pt")  # a ScriptFunction records no shapes
    assert main([str(fn), "inputshape=[2,3],[2,3],[2,3]"]) == 0, capsys.readouterr().err
    assert input_count(tmp_path / "fn.pnnx.param") == 3
    assert torch.equal(run_pnnx_py(tmp_path / "fn_pnnx.py", x, a, b), x * 2 + a - b)
    capsys.readouterr()
    assert main([str(fn), "inputshape=[2,3]"]) == 2
    assert "takes 3 input tensors" in capsys.readouterr().err


class CopyIntoViewOfInput(nn.Module):
    def forward(self, x):
        v = x.view(1, 3, 16, 16)
        v[:, :, 2:5, 3:6].copy_(torch.ones(1, 3, 3, 3))
        return v + 1


class WriteIntoViewThenReadInput(nn.Module):
    """The write through the view changes x too: x read afterwards sees it."""

    def forward(self, x):
        v = x.view(2, 4, 6)
        v[:, 1:3, ::2].mul_(3)
        v[0, :, 1] = x[1, :4] * 0.5
        return x * 2, v - 1


def test_an_inplace_copy_into_a_slice_of_a_view_of_an_input(tmp_path, capsys):
    torch.manual_seed(0)
    x = torch.rand(1, 3, 256)
    pt = trace(CopyIntoViewOfInput(), (x.clone(),), tmp_path / "cv.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    assert torch.equal(run_pnnx_py(tmp_path / "cv_pnnx.py", x.clone()), CopyIntoViewOfInput()(x.clone()))


def test_the_input_written_through_its_view_is_the_written_value(tmp_path, capsys):
    torch.manual_seed(0)
    x = torch.rand(6, 8)
    pt = trace(WriteIntoViewThenReadInput(), (x.clone(),), tmp_path / "wv.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    got = run_pnnx_py(tmp_path / "wv_pnnx.py", x.clone())
    want = WriteIntoViewThenReadInput()(x.clone())
    assert all(torch.equal(g, w) for g, w in zip(got, want))
