"""Helpers for the ONNX export tests: build small pnnx graphs by hand, export them, check
them with the ONNX checker and strict shape inference, run them in onnxruntime through the
conformance backend and compare with the conformance comparison (conformance_runs)."""
from __future__ import annotations

import onnx
import torch

from conformance_runs import run_onnx, tolerance
from conformance_runs import assert_close as _assert_close
from pnnx_reference.emit.onnx import build_model, write_onnx
from pnnx_reference.emit.onnx.dtypes import COMPLEX_PARTS
from pnnx_reference.ir import Attribute, Graph, dtype_suffix_of


class GraphMaker:
    """g = GraphMaker(); x = g.input((1, 3, 8, 8)); y = g.op("F.relu", [x], [(1, 3, 8, 8)])"""

    def __init__(self) -> None:
        self.graph = Graph()
        self._n = 0

    def _operand(self, shape, dtype):
        name = str(len(self.graph.operands))
        return self.graph.new_operand(name, shape, dtype)

    def input(self, shape, dtype="f32"):
        op = self.graph.new_operator("pnnx.Input", f"pnnx_input_{len(self.graph.inputs())}")
        out = self._operand(shape, dtype)
        self.graph.connect(op, outputs=[out])
        return out

    def op(self, type_, inputs, out_shapes, params=None, attrs=None, inputnames=None,
           dtype="f32", name=None):
        self._n += 1
        op = self.graph.new_operator(type_, name or f"{type_.split('.')[-1]}_{self._n}")
        outs = [self._operand(s, dtype) for s in out_shapes]
        self.graph.connect(op, inputs=inputs, outputs=outs)
        op.params.update(params or {})
        for key, tensor in (attrs or {}).items():
            op.attrs[key] = Attribute.from_torch(tensor)
        if inputnames:
            op.inputnames = list(inputnames)
        return outs[0] if len(outs) == 1 else outs

    def module(self, type_, module, inputs, out_shapes, params, **kw):
        """An nn.* operator whose attrs are the module's parameters and buffers."""
        attrs = {k: v for k, v in module.state_dict().items() if not k.endswith("num_batches_tracked")}
        return self.op(type_, inputs, out_shapes, params, attrs, **kw)

    def attribute(self, tensor):
        self._n += 1
        op = self.graph.new_operator("pnnx.Attribute", f"attr_{self._n}")
        out = self._operand(list(tensor.shape), dtype_suffix_of(tensor.dtype))
        self.graph.connect(op, outputs=[out])
        op.attrs["data"] = Attribute.from_torch(tensor)
        return out

    def output(self, *operands):
        for operand in operands:
            op = self.graph.new_operator("pnnx.Output", f"pnnx_output_{len(self.graph.outputs())}")
            self.graph.connect(op, inputs=[operand])
        return self.graph


def shape_mismatches(model: onnx.ModelProto, graph: Graph, data_prop: bool = False) -> list[str]:
    """Operands whose shape from `infer_shapes(strict_mode=True)` differs from the pnnx
    annotation (`?` matches anything); onnx raises InferenceError on inconsistencies.
    `data_prop` also propagates constant shape values (stricter, slower)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=data_prop)
    g = inferred.graph
    infos = {v.name: v for v in list(g.value_info) + list(g.output) + list(g.input)}
    problems = []
    for operand in graph.operands:
        info = infos.get(operand.name)
        if operand.shape is None or info is None:
            continue
        t = info.type.tensor_type
        if not t.HasField("shape"):
            problems.append(f"{operand.name}: no inferred shape")
            continue
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        want = list(operand.shape) + ([2] if operand.dtype in COMPLEX_PARTS else [])
        if len(dims) != len(want) or any(w >= 0 and d >= 0 and d != w for d, w in zip(dims, want)):
            problems.append(f"{operand.name}: inferred {dims}, pnnx {want}")
    return problems


def check_shapes(model: onnx.ModelProto, graph: Graph) -> None:
    """Strict shape inference (with data propagation) must agree with every annotated shape."""
    problems = shape_mismatches(model, graph, data_prop=True)
    assert not problems, problems


def run_model(model: onnx.ModelProto, inputs, tmp_path, name="run"):
    """An in-memory model through the onnxruntime conformance backend (which reads files)."""
    path = tmp_path / f"{name}.pnnx.onnx"
    onnx.save(model, path)
    return run_onnx(path, inputs)


def export_and_run(graph: Graph, inputs, tmp_path, fp16=False, opset=None, name="m"):
    """write_onnx + checker + shape agreement + onnxruntime; returns (outputs, model)."""
    path = tmp_path / f"{name}.pnnx.onnx"
    write_onnx(graph, path, fp16=fp16, opset=opset)
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    check_shapes(model, graph)
    return run_onnx(path, inputs), model


def export_module(model, inputs, tmp_path, fp16=False):
    """Capture a torch module, then export_and_run it; returns (onnxruntime outputs, torch
    outputs as arrays, the ONNX model, the captured graph)."""
    from pnnx_reference.api import capture

    with torch.no_grad():
        want = model(*inputs)
    want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else (want,))]
    graph = capture(model, tuple(inputs))
    got, onnx_model = export_and_run(graph, inputs, tmp_path, fp16=fp16)
    return got, want, onnx_model, graph


def assert_close(got, want, atol=1e-4, rtol=1e-4):
    """Same outputs, shapes and (within atol + rtol|want|) values: the conformance comparison."""
    _assert_close(got, want, tolerance(atol, rtol, "onnxruntime fp32 (the table's 1e-4) unless the test pins less"))


def op_types(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


__all__ = ["GraphMaker", "assert_close", "build_model", "check_shapes", "export_and_run", "export_module",
           "op_types", "run_model", "shape_mismatches"]
