"""Checking an exported model: strict shape inference against the pnnx operand shapes, and
running it in onnxruntime (CPU). Used by the tests, the benchmark and backends."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from ...ir import Graph


def shape_mismatches(model: onnx.ModelProto, graph: Graph) -> list[str]:
    """Operands whose shape from `infer_shapes(strict_mode=True)` differs from the pnnx
    annotation (`?` matches anything). Raises onnx's InferenceError on inconsistencies."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
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
        if len(dims) != len(operand.shape) or any(
                w >= 0 and d >= 0 and d != w for d, w in zip(dims, operand.shape)):
            problems.append(f"{operand.name}: inferred {dims}, pnnx {list(operand.shape)}")
    return problems


def session(model_or_path, threads: int = 1):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    source = model_or_path.SerializeToString() if isinstance(model_or_path, onnx.ModelProto) \
        else str(model_or_path)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def run_onnx(model_or_path, inputs: Sequence, threads: int = 1) -> list[np.ndarray]:
    """Run with onnxruntime's CPU provider; `inputs` are tensors or arrays in graph order."""
    sess = session(model_or_path, threads)
    feeds = {}
    for info, value in zip(sess.get_inputs(), inputs):
        array = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        feeds[info.name] = np.ascontiguousarray(array)
    return sess.run(None, feeds)
