"""Module operators in ncnn: a moduleop whose body was captured is written as its body's
layers (named after the module), so the ncnn model loads and runs without a custom layer;
one read back from pnnx.param (no body) is refused by name."""
from __future__ import annotations

import pytest
import torch

from moduleop_models import Outer, build_model, moduleop_of
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture, export
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param, pnnx_param


def _export_ncnn(tmp_path, model, x):
    result = export(model, x, tmp_path, "m", moduleop=moduleop_of(model), fp16=False)
    assert "ncnnparam" in result.paths, result.unsupported.get("ncnn")
    return result


@pytest.mark.parametrize("cls", [None, Outer], ids=["focus_and_shuffle", "nested"])
def test_module_bodies_run_in_ncnn(tmp_path, cls):
    model = build_model() if cls is None else build_model(cls)
    x = torch.rand(1, 3, 16, 16)
    _export_ncnn(tmp_path, model, x)
    base = tmp_path / "m"
    expected = torch_outputs(model, [x])
    assert_close(run_ncnn(base, [x], "fp32"), expected, FP32, "moduleop body")


def test_inlined_layers_are_named_after_the_module(tmp_path):
    result = _export_ncnn(tmp_path, build_model(), torch.rand(1, 3, 16, 16))
    blobs = {b for layer in ncnn_param.load(result.paths["ncnnparam"]).layers for b in layer.outputs}
    assert any(b.startswith("focus.") for b in blobs) and any(b.startswith("shuffle.") for b in blobs)
    assert not any(layer.type.endswith(("Focus", "Shuffle"))
                   for layer in ncnn_param.load(result.paths["ncnnparam"]).layers)


@pytest.mark.parametrize("cls", [None, Outer], ids=["focus_and_shuffle", "nested"])
def test_a_body_batchnorm_folds_into_its_convolution(tmp_path, cls):
    """A body is captured without the passes: its conv + bn is one Convolution in ncnn, as the
    main graph's is (the unfolded BatchNorm cost a layer and a pass over the blob)."""
    model = build_model() if cls is None else build_model(cls)
    x = torch.rand(1, 3, 16, 16)
    result = _export_ncnn(tmp_path, model, x)
    layers = ncnn_param.load(result.paths["ncnnparam"]).layers
    assert [layer.type for layer in layers if layer.type == "BatchNorm"] == []
    assert_close(run_ncnn(tmp_path / "m", [x], "fp32"), torch_outputs(model, [x]), FP32, "folded body batchnorm")


def test_the_pnnx_graph_keeps_one_operator_per_module(tmp_path):
    graph = capture(model := build_model(), torch.rand(1, 3, 16, 16), moduleop=moduleop_of(model))
    write_ncnn(graph, tmp_path / "a.ncnn.param", tmp_path / "a.ncnn.bin", tmp_path / "a_ncnn.py")
    assert sum(op.type.endswith(".Focus") for op in graph.ops) == 1  # the writer works on a copy


def test_a_module_operator_without_its_body_is_refused(tmp_path):
    result = _export_ncnn(tmp_path, build_model(), torch.rand(1, 3, 16, 16))
    graph = pnnx_param.load(result.paths["pnnxparam"])  # bodies are never stored in pnnx.param
    with pytest.raises(UnsupportedOperator, match=r"\.Focus \(focus\): no ncnn lowering"):
        write_ncnn(graph, tmp_path / "b.ncnn.param", tmp_path / "b.ncnn.bin", tmp_path / "b_ncnn.py")
