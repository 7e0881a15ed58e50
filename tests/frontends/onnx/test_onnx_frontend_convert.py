"""ONNX files become PyTorch-level PNNX graphs: layers with constant weights as nn modules,
elementwise chains as one pnnx.Expression, shape subgraphs folded (or size() expressions where
the dim is symbolic), and the generated code computes what onnxruntime does."""
import contextlib
import io
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper

from onnx_models import FLOAT, graph_model, op_types, run_generated, run_ort
from pnnx_reference import api
from pnnx_reference.cli import main
from pnnx_reference.errors import ConversionError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4, 10)
        self.ln = nn.LayerNorm(10)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        y = F.interpolate(y, scale_factor=2.0, mode="bilinear")
        y = F.adaptive_avg_pool2d(y, 2).reshape(x.shape[0], -1)
        return self.ln(self.fc(y)).softmax(-1) * 2 + 1


def export(model, x, path: Path, dynamo: bool, dynamic: bool = False) -> Path:
    torch.manual_seed(0)
    model.eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 1.5)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if dynamo:
            shapes = {"x": {0: torch.export.Dim("batch", min=1, max=64)}} if dynamic else None
            torch.onnx.export(model, (x,), str(path), dynamo=True, input_names=["x"], dynamic_shapes=shapes)
        else:
            axes = {"x": {0: "batch"}} if dynamic else None
            torch.onnx.export(model, (x,), str(path), dynamo=False, input_names=["x"], dynamic_axes=axes,
                              opset_version=18)
    return path


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript_exporter", "dynamo_exporter"])
def test_torch_export_converts_to_pytorch_level_operators(tmp_path, dynamo):
    torch.manual_seed(0)
    model, x = Net(), torch.rand(1, 3, 4, 4)
    path = export(model, x, tmp_path / "net.onnx", dynamo)
    result = api.export_onnx(path, tmp_path, "net")
    assert set(result.paths) == set(api.ARTEFACTS) and not result.unsupported
    types = op_types(result.paths["pnnxparam"])
    for expected in ("nn.Conv2d", "F.relu", "F.interpolate", "nn.Linear", "nn.LayerNorm", "F.softmax"):
        assert expected in types, types
    assert types.count("pnnx.Expression") == 1  # softmax(...) * 2 + 1 is one expression
    with torch.no_grad():
        want = model(x)
    got = run_generated(result.paths["pnnxpy"], [x])[0]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript_exporter", "dynamo_exporter"])
def test_symbolic_batch_comes_out_dynamic(tmp_path, dynamo):
    torch.manual_seed(0)
    model = Net()
    path = export(model, torch.rand(2, 3, 4, 4), tmp_path / "net.onnx", dynamo, dynamic=True)
    result = api.export_onnx(path, tmp_path, "net", input_shapes=[[1, 3, 4, 4]])
    assert not result.notes
    param = Path(result.paths["pnnxparam"]).read_text()
    assert "#0=(?,3,4,4)f32" in param
    for batch in (1, 3):
        x = torch.rand(batch, 3, 4, 4)
        with torch.no_grad():
            want = model(x)
        torch.testing.assert_close(run_generated(result.paths["pnnxpy"], [x])[0], want, rtol=1e-5, atol=1e-5)


def shape_subgraph(dims):
    """x.view(x.size(0), -1) the way the TorchScript exporter writes it."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus_one"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    return graph_model(nodes, [("x", FLOAT, dims)], [("y", FLOAT, None)],
                       {"zero": np.array(0), "axes": np.array([0]), "minus_one": np.array([-1])})


def test_shape_subgraph_folds_where_the_shape_is_known(tmp_path):
    result = api.export_onnx(shape_subgraph([2, 3, 4]), tmp_path, "m")
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "Tensor.reshape", "pnnx.Output"]
    assert "shape=(2,-1)" in Path(result.paths["pnnxparam"]).read_text()


def test_shape_subgraph_is_a_size_expression_where_the_dim_is_symbolic(tmp_path):
    result = api.export_onnx(shape_subgraph(["N", 3, 4]), tmp_path, "m", input_shapes=[[2, 3, 4]])
    param = Path(result.paths["pnnxparam"]).read_text()
    assert "expr=[size(@0,0),-1]" in param and "#0=(?,3,4)f32" in param
    x = np.random.default_rng(0).random((5, 3, 4), dtype=np.float32)
    np.testing.assert_array_equal(run_generated(result.paths["pnnxpy"], [x])[0].numpy(), x.reshape(5, -1))


def test_matmul_add_with_constants_is_a_linear(tmp_path):
    rng = np.random.default_rng(0)
    w, b = rng.random((16, 8), dtype=np.float32), rng.random(8, dtype=np.float32)
    model = graph_model([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
                        [("x", FLOAT, [2, 5, 16])], [("y", FLOAT, None)], {"w": w, "b": b})
    result = api.export_onnx(model, tmp_path, "m")
    assert op_types(result.paths["pnnxparam"]) == ["pnnx.Input", "nn.Linear", "pnnx.Output"]
    x = rng.random((2, 5, 16), dtype=np.float32)
    np.testing.assert_allclose(run_generated(result.paths["pnnxpy"], [x])[0].numpy(), run_ort(model, [x])[0],
                               rtol=1e-5, atol=1e-5)


def test_external_data_is_read_from_the_model_folder(tmp_path, capsys):
    rng = np.random.default_rng(0)
    model = graph_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], [("x", FLOAT, [1, 4, 6, 6])],
                        [("y", FLOAT, None)], {"w": rng.random((8, 4, 3, 3), dtype=np.float32)})
    path = tmp_path / "conv.onnx"
    stored = onnx.ModelProto()
    stored.CopyFrom(model)
    onnx.save(stored, str(path), save_as_external_data=True, location="conv.weights", size_threshold=0)
    assert (tmp_path / "conv.weights").stat().st_size == 8 * 4 * 3 * 3 * 4
    assert main([str(path)]) == 0, capsys.readouterr().err
    x = rng.random((1, 4, 6, 6), dtype=np.float32)
    got = run_generated(tmp_path / "conv_pnnx.py", [x])[0].numpy()
    np.testing.assert_allclose(got, run_ort(model, [x])[0], rtol=1e-5, atol=1e-5)
    assert "nn.Conv2d" in op_types(tmp_path / "conv.pnnx.param")


def test_a_model_proto_converts_like_a_file(tmp_path):
    model = shape_subgraph([2, 3, 4])
    from_proto = api.export_onnx(model, tmp_path / "a", "m")
    onnx.save(model, str(tmp_path / "m.onnx"))
    from_file = api.export_onnx(tmp_path / "m.onnx", tmp_path / "b", "m")
    assert Path(from_proto.paths["pnnxparam"]).read_text() == Path(from_file.paths["pnnxparam"]).read_text()


def test_capture_onnx_returns_the_graph_without_writing(tmp_path):
    graph = api.capture_onnx(shape_subgraph([2, 3, 4]))
    assert [op.type for op in graph.ops] == ["pnnx.Input", "Tensor.reshape", "pnnx.Output"]
    assert not any(tmp_path.iterdir())


def test_fixed_shape_constants_keep_symbolic_dims_fixed_with_a_note(tmp_path):
    """A reshape the exporter fixed as a constant cannot run at another batch: the dims stay
    fixed at inputshape and the result says so (never a graph that is wrong at other sizes)."""
    model = graph_model([helper.make_node("Reshape", ["x", "shape"], ["y"])], [("x", FLOAT, ["N", 6])],
                        [("y", FLOAT, None)], {"shape": np.array([2, 3, 2])})
    result = api.export_onnx(model, tmp_path, "m", input_shapes=[[2, 6]])
    assert result.notes and "stay fixed at [2, 6]" in result.notes[0]
    assert "#0=(2,6)f32" in Path(result.paths["pnnxparam"]).read_text()


def _opset_model(opset: int) -> onnx.ModelProto:
    """Conv, Relu, ReduceMean, Reshape, Softmax, Clip, Split: operators whose signature changed
    between opsets 11 and 23 (axes and min/max and split sizes moved from attributes to inputs)."""
    rng = np.random.default_rng(opset)
    init = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "shape": np.array([0, -1]),
            "lo": np.array(-0.5, np.float32), "hi": np.array(0.5, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"])]
    if opset >= 18:
        init["axes"] = np.array([3])
        nodes.append(helper.make_node("ReduceMean", ["r", "axes"], ["m"], keepdims=1))
    else:
        nodes.append(helper.make_node("ReduceMean", ["r"], ["m"], axes=[3], keepdims=1))
    nodes += [helper.make_node("Reshape", ["m", "shape"], ["f"]), helper.make_node("Softmax", ["f"], ["s"], axis=1),
              helper.make_node("Clip", ["f", "lo", "hi"], ["k"])]
    if opset >= 13:
        init["split"] = np.array([6, 10])
        nodes.append(helper.make_node("Split", ["k", "split"], ["a", "b"], axis=1))
    else:
        nodes.append(helper.make_node("Split", ["k"], ["a", "b"], axis=1, split=[6, 10]))
    return graph_model(nodes, [("x", FLOAT, [2, 3, 4, 5])], [(n, FLOAT, None) for n in ("s", "a", "b")], init, opset)


@pytest.mark.parametrize("opset", range(11, 24))
def test_every_certified_opset_converts_and_matches_onnxruntime(tmp_path, opset):
    model = _opset_model(opset)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    result = api.export_onnx(model, tmp_path, "m")
    assert "nn.Conv2d" in op_types(result.paths["pnnxparam"])
    for ours, theirs in zip(run_generated(result.paths["pnnxpy"], [x]), run_ort(model, [x]), strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-5)


def test_a_second_shape_the_user_gave_is_never_dropped(tmp_path):
    """The dims-stay-fixed fallback is for a doubled shape the converter chose; at a second
    shape the user named, the model's error is the user's."""
    model = graph_model([helper.make_node("Reshape", ["x", "shape"], ["y"])], [("x", FLOAT, ["N", 6])],
                        [("y", FLOAT, None)], {"shape": np.array([2, 3, 2])})
    with pytest.raises(ConversionError):
        api.export_onnx(model, tmp_path, "m", input_shapes=[[2, 6]], input_shapes2=[[4, 6]])
    assert not any(tmp_path.iterdir())


def test_an_error_unrelated_to_the_second_shape_is_not_retried(tmp_path, monkeypatch):
    """The model runs and traces alike at the doubled shape, so an error of the conversion
    (here: made up, in the export) is raised as it is, not hidden by a static retry."""
    model = graph_model([helper.make_node("Relu", ["x"], ["y"])], [("x", FLOAT, ["N", 6])], [("y", FLOAT, None)])
    calls = []

    def failing_export(*args, inputs2=None, **kwargs):
        calls.append(inputs2)
        raise ConversionError("the emitter failed")

    monkeypatch.setattr(api, "export", failing_export)
    with pytest.raises(ConversionError, match="the emitter failed"):
        api.export_onnx(model, tmp_path, "m", input_shapes=[[2, 6]])
    assert len(calls) == 1 and calls[0] is not None


def test_the_fallback_note_reaches_the_command_line(tmp_path, capsys):
    model = graph_model([helper.make_node("Reshape", ["x", "shape"], ["y"])], [("x", FLOAT, ["N", 6])],
                        [("y", FLOAT, None)], {"shape": np.array([2, 3, 2])})
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    assert main([str(path), "inputshape=[2,6]"]) == 0
    err = capsys.readouterr().err
    assert "note:" in err and "stay fixed at [2, 6]" in err and "inputshape2" in err


def test_a_bitcast_converts_for_pytorch_and_is_declined_where_it_has_no_form(tmp_path):
    """BitCast reads the same bytes as another type: `view(dtype)` in _pnnx.py; the .pnnx.onnx
    (opset 23, before BitCast) and ncnn (float blobs) decline it by name, never a Reshape."""
    node = helper.make_node("BitCast", ["x"], ["y"], to=onnx.TensorProto.INT32)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.INT32, [3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    result = api.export_onnx(model, tmp_path, "bc")
    assert "BitCast from opset 26" in result.unsupported["onnx"]
    assert "reinterprets bytes" in result.unsupported["ncnn"]
    x = torch.randn(3, 4)
    assert torch.equal(run_generated(result.paths["pnnxpy"], [x])[0], x.view(torch.int32))
