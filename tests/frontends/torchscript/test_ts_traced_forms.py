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


class SliceToSize(nn.Module):
    def forward(self, x):
        return x[:, 1:x.size(1) - 1] * 2


class SliceTwoDimsToSizes(nn.Module):
    def forward(self, x):
        return x[:, 1:x.size(1) - 1, :x.size(2) // 2] * 2


def test_a_slice_end_that_follows_the_size_with_input_npy_and_inputshape2(tmp_path, capsys):
    """The bound is the graph's shape arithmetic (`$end=sub(size(@0,1),1)`), not the example's 7."""
    torch.manual_seed(0)
    pt = trace(SliceToSize(), (torch.rand(1, 8, 4),), tmp_path / "sl.pt")
    npy = tmp_path / "a.npy"
    np.save(npy, np.random.default_rng(0).random((1, 8, 4), dtype=np.float32))
    assert main([str(pt), f"input={npy}", "inputshape2=[1,10,4]"]) == 0, capsys.readouterr().err
    ops = {op.type: op for op in pnnx_param.load_text(tmp_path / "sl.pnnx.param").ops}
    assert "end" in ops["Tensor.slice"].inputnames
    x = torch.rand(1, 13, 4)
    assert torch.equal(run_pnnx_py(tmp_path / "sl_pnnx.py", x), SliceToSize()(x))


def test_slice_bounds_on_two_dims_that_follow_sizes(tmp_path, capsys):
    torch.manual_seed(0)
    pt = trace(SliceTwoDimsToSizes(), (torch.rand(1, 8, 4),), tmp_path / "s2.pt")
    assert main([str(pt), "inputshape=[1,8,4]", "inputshape2=[1,10,6]"]) == 0, capsys.readouterr().err
    x = torch.rand(1, 11, 9)
    assert torch.equal(run_pnnx_py(tmp_path / "s2_pnnx.py", x), SliceTwoDimsToSizes()(x))


def test_traced_slice_bounds_at_one_static_shape_fold_to_the_static_form(tmp_path, capsys):
    pt = trace(SliceTwoDimsToSizes(), (torch.rand(1, 8, 4),), tmp_path / "st.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    ops = pnnx_param.load_text(tmp_path / "st.pnnx.param").ops
    assert [op.type for op in ops] == ["pnnx.Input", "Tensor.slice", "pnnx.Expression", "pnnx.Output"]
    assert ops[1].params == {"dims": [1, 2], "ends": [7, 2], "selects": [2147483647] * 2, "starts": [1, 0],
                             "steps": [1, 1]}
    assert "unsupported" not in capsys.readouterr().err


class ArangeFromValues(nn.Module):
    def forward(self, x):
        return torch.arange(x[3], x[4], x[6] * 0.1)


def test_arange_bounds_read_from_an_integer_input_at_run_time(tmp_path, capsys):
    """The bounds are the input's values, which the graph computes: _pnnx.py and pnnx.onnx
    compute them for any input, as upstream's _pnnx.py does; ncnn has no layer for it."""
    import onnxruntime as ort

    x = torch.tensor([1, 2, 3, 4, 20, 6, 7, 8], dtype=torch.int32)
    pt = trace(ArangeFromValues(), (x,), tmp_path / "ar.pt")
    npy = tmp_path / "x.npy"
    np.save(npy, x.numpy())
    assert main([str(pt), f"input={npy}"]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "ncnn: unsupported: torch.arange" in err and "onnx" not in err, err
    ops = {op.type: op for op in pnnx_param.load_text(tmp_path / "ar.pnnx.param").ops}
    assert ops["torch.arange"].inputnames == ["start", "end", "step"]
    other = torch.tensor([0, 0, 0, -3, 9, 0, 15, 0], dtype=torch.int32)
    want = ArangeFromValues()(other)
    assert torch.equal(run_pnnx_py(tmp_path / "ar_pnnx.py", other), want)
    session = ort.InferenceSession(str(tmp_path / "ar.pnnx.onnx"))
    got = session.run(None, {session.get_inputs()[0].name: other.numpy()})[0]
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)



class TiedHead(nn.Module):
    """An output projection sharing the embedding's weight, as language models tie them:
    tracing passes the weight to the head's forward as an argument."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(40, 16)
        self.head = nn.Linear(16, 40, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(torch.relu(self.embed(ids)))


def test_tied_weights_convert_at_two_shapes_and_match_at_a_third(tmp_path, capsys):
    """"the model runs different operators for inputshape and inputshape2" before: the head's
    replay, built at its first call, recorded its weight's detach() in the first trace only."""
    from conformance_runs import assert_close, run_ncnn, run_onnx

    torch.manual_seed(0)
    model = TiedHead().eval()
    pt = trace(model, (torch.randint(0, 40, (1, 8)),), tmp_path / "tied.pt")
    assert main([str(pt), "inputshape=[1,8]i64", "inputshape2=[1,16]i64", "fp16=0"]) == 0, capsys.readouterr().err
    assert "unsupported" not in capsys.readouterr().err
    ids = torch.randint(0, 40, (1, 5), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = [model(ids)]
    tol = {"atol": 1e-5, "rtol": 1e-5}
    assert_close(run_onnx(tmp_path / "tied.pnnx.onnx", [ids]), expected, tol, "onnxruntime")
    assert_close(run_ncnn(tmp_path / "tied", [ids]), expected, tol, "ncnn")
