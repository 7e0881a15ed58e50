"""Operators ONNX defines for fewer float types than torch has, at the opset written: Celu takes
float32 only before opset 24, Einsum no bfloat16 before opset 26, and a bitcast (`view(dtype)`)
has no operator before BitCast (opset 26). The file must pass the checker and compute what torch
computes, or the operator is declined by name: never a Reshape that reads the wrong type."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F

from onnx_export_util import GraphMaker, export_and_run, op_types
from pnnx_reference.emit.onnx import write_onnx
from pnnx_reference.errors import UnsupportedOperator


@pytest.mark.parametrize("dtype, torch_dtype", [("f16", torch.float16), ("bf16", torch.bfloat16)])
def test_celu_in_a_narrow_float_computes_in_float32(tmp_path, dtype, torch_dtype):
    g = GraphMaker()
    a = g.input((2, 5), dtype)
    y = g.op("F.celu", [a], [(2, 5)], {"alpha": 2.0}, inputnames=["input"], dtype=dtype)
    graph = g.output(y)
    x = (torch.arange(10, dtype=torch.float32).reshape(2, 5) - 5).to(torch_dtype)
    if dtype == "bf16":  # numpy, which feeds onnxruntime, has no bfloat16: the file is what is checked
        path = tmp_path / "m.pnnx.onnx"
        write_onnx(graph, path, fp16=False)
        model = onnx.load(path)
        onnx.checker.check_model(model, full_check=True)
    else:
        got, model = export_and_run(graph, [x], tmp_path)
        np.testing.assert_array_equal(got[0], F.celu(x, alpha=2.0).numpy())
    assert op_types(model) == ["Cast", "Celu", "Cast"]


def test_celu_in_float32_is_one_node(tmp_path):
    g = GraphMaker()
    graph = g.output(g.op("F.celu", [g.input((2, 5))], [(2, 5)], {"alpha": 1.0}, inputnames=["input"]))
    _, model = export_and_run(graph, [torch.rand(2, 5)], tmp_path)
    assert op_types(model) == ["Celu"]


def test_einsum_in_bfloat16_passes_the_checker(tmp_path):
    g = GraphMaker()
    a, b = g.input((2, 3, 4), "bf16"), g.input((2, 4, 5), "bf16")
    y = g.op("torch.einsum", [a, b], [(2, 3, 5)], {"equation": "bij,bjk->bik"}, inputnames=["operands", "operands"],
             dtype="bf16")
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(g.output(y), path, fp16=False)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert op_types(model) == ["Cast", "Cast", "Einsum", "Cast"]


def _bitcast_graph():
    g = GraphMaker()
    a = g.input((3, 4))
    return g.output(g.op("Tensor.view", [a], [(3, 4)], {"dtype": "torch.int"}, inputnames=["input"], dtype="i32"))


def test_a_bitcast_is_declined_before_opset_26(tmp_path):
    with pytest.raises(UnsupportedOperator, match="BitCast from opset 26"):
        write_onnx(_bitcast_graph(), tmp_path / "m.pnnx.onnx", fp16=False)
    assert not (tmp_path / "m.pnnx.onnx").exists()


def test_a_bitcast_is_bitcast_from_opset_26(tmp_path):
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(_bitcast_graph(), path, fp16=False, opset=26)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert op_types(model) == ["BitCast"] and model.graph.node[0].attribute[0].i == onnx.TensorProto.INT32
