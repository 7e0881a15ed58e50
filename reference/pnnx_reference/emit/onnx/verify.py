"""Checking an exported model: strict shape inference against the pnnx operand shapes, and
running it in onnxruntime (CPU). Used by the tests, the benchmark and backends."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx

from ...ir import Graph
from .dtypes import COMPLEX_PARTS
from .export import COMPLEX_INPUTS, COMPLEX_OUTPUTS


def shape_mismatches(model: onnx.ModelProto, graph: Graph, data_prop: bool = False) -> list[str]:
    """Operands whose shape from `infer_shapes(strict_mode=True)` differs from the pnnx
    annotation (`?` matches anything). Raises onnx's InferenceError on inconsistencies.
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
    """Run with onnxruntime's CPU provider; `inputs` are tensors or arrays in graph order.
    Complex inputs and outputs (trailing-2 real tensors in the model) are complex arrays here."""
    sess = session(model_or_path, threads)
    meta = sess.get_modelmeta().custom_metadata_map
    complex_in, complex_out = (_positions(meta.get(k)) for k in (COMPLEX_INPUTS, COMPLEX_OUTPUTS))
    feeds = {}
    for i, (info, value) in enumerate(zip(sess.get_inputs(), inputs)):
        array = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        if i in complex_in:
            array = np.stack([array.real, array.imag], axis=-1)
        feeds[info.name] = np.array(array, order="C")  # (ascontiguousarray makes 0-d 1-d)
    outputs = sess.run(None, feeds)
    return [o[..., 0] + 1j * o[..., 1] if i in complex_out else o for i, o in enumerate(outputs)]


def _positions(value) -> set[int]:
    return {int(p) for p in value.split(",") if p} if value else set()


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
        w = w.detach().cpu().resolve_conj().resolve_neg().numpy()
        if g.shape != w.shape:
            return "mismatch", f"output {i}: shape {g.shape}, torch {w.shape}"
        if np.iscomplexobj(g) or np.iscomplexobj(w):  # compare (real, imaginary) pairs
            g, w = (np.stack([np.real(a), np.imag(a)], axis=-1) for a in (g, w))
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if not np.allclose(g64, w64, atol=atol, rtol=rtol, equal_nan=True):
            return "mismatch", f"output {i}: max |diff| {np.nanmax(np.abs(g64 - w64)):.3g}"
    return "match", ""


def _first_line(err) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__
