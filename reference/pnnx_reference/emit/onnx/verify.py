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
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
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
        feeds[info.name] = np.array(array, order="C")  # (ascontiguousarray makes 0-d 1-d)
    return sess.run(None, feeds)


# --- one conformance case end to end -----------------------------------------------------------
STATUSES = ("match", "mismatch", "unsupported", "capture-fail", "checker", "ort", "random-exported")


def check_case(case, fp16: bool = False, atol: float = 1e-4, rtol: float = 1e-4) -> tuple[str, str]:
    """Capture `case` (an op_cases Case), lower it, check it and compare onnxruntime with
    torch eager. Returns (status, detail) with status one of STATUSES. A case tagged `random`
    stops after a successful run (its values cannot be compared)."""
    from ...api import capture
    from ...errors import PnnxError
    from .export import UnsupportedOperators, build_model

    try:
        inputs = case.make_inputs()
        graph = capture(case.make_model(), inputs)
    except (PnnxError, RuntimeError, TypeError, ValueError) as err:
        return "capture-fail", _first_line(err)
    try:
        model = build_model(graph, fp16=fp16)
    except UnsupportedOperators as err:
        return "unsupported", str(err)
    try:
        onnx.checker.check_model(model, full_check=True)
        bad = shape_mismatches(model, graph)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as err:
        return "checker", _first_line(err)
    if bad:
        return "checker", "; ".join(bad[:3])
    try:
        got = run_onnx(model, inputs)
    except Exception as err:  # onnxruntime raises its own exception types
        return "ort", _first_line(err)
    if "random" in case.tags:
        return "random-exported", ""
    return _compare(got, case.run_eager(), case.tolerance, atol, rtol)


def _compare(got, want, hint, atol, rtol) -> tuple[str, str]:
    if hint is not None:
        atol, rtol = max(atol, hint.atol), max(rtol, hint.rtol)
    if len(got) != len(want):
        return "mismatch", f"{len(got)} outputs, torch has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.detach().cpu().numpy()
        if g.shape != w.shape:
            return "mismatch", f"output {i}: shape {g.shape}, torch {w.shape}"
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if not np.allclose(g64, w64, atol=atol, rtol=rtol, equal_nan=True):
            return "mismatch", f"output {i}: max |diff| {np.nanmax(np.abs(g64 - w64)):.3g}"
    return "match", ""


def _first_line(err) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__
