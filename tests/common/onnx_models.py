"""Small ONNX graphs built with onnx.helper, onnxruntime runs, and the generated `_pnnx.py`
loaded and run: what the ONNX frontend and harness tests share."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto, helper, numpy_helper


def graph_model(nodes, inputs, outputs, initializers=(), opset=17) -> onnx.ModelProto:
    """inputs/outputs: [(name, elem_type, dims)]; initializers: {name: np.ndarray}."""
    graph = helper.make_graph(
        nodes, "test", [helper.make_tensor_value_info(n, t, d) for n, t, d in inputs],
        [helper.make_tensor_value_info(n, t, d) for n, t, d in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(initializers).items()])
    opsets = [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=helper.find_min_ir_version_for(opsets))


def run_ort(model: onnx.ModelProto, inputs) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {n: np.asarray(x) for n, x in zip(names, inputs)})


def load_generated(py: Path):
    """The generated `_pnnx.py`'s Model(), built in its own folder."""
    spec = importlib.util.spec_from_file_location(f"gen_{abs(hash(str(py)))}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cwd = os.getcwd()
    os.chdir(Path(py).parent)
    try:
        return module.Model().eval()
    finally:
        os.chdir(cwd)


def run_generated(py: Path, inputs) -> list[torch.Tensor]:
    model = load_generated(py)
    with torch.no_grad():
        out = model(*[torch.as_tensor(np.asarray(x)) for x in inputs])
    return list(out) if isinstance(out, (tuple, list)) else [out]


def op_types(param: Path) -> list[str]:
    lines = Path(param).read_text().splitlines()[2:]
    return [line.split()[0] for line in lines if line.strip()]


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
