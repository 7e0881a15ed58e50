"""What the command-line converter plug-ins (upstream, reference-pt, reference-export,
reference-onnx) share: the case written as the file a user hands the command (a traced .pt,
an ONNX-table case's .onnx), its input shapes as the command's arguments, the file names
the command writes for a model saved as case.pt and its time limit."""
from __future__ import annotations

import traceback
import warnings
from pathlib import Path

from ..errors import NotSupported

# upstream file name for each artefact kind, for a model saved as case.pt
FILES = {"pnnx.param": "case.pnnx.param", "pnnx.bin": "case.pnnx.bin", "pnnx.py": "case_pnnx.py",
         "pnnx.onnx": "case.pnnx.onnx", "ncnn.param": "case.ncnn.param",
         "ncnn.bin": "case.ncnn.bin", "ncnn.py": "case_ncnn.py"}
TIMEOUT_S = 120


def trace_to_pt(case, workdir: Path, model=None, inputs=None) -> Path:
    """`torch.jit.trace` the case and save it as workdir/case.pt (what a user hands `pnnx`)."""
    import torch

    model = case.make_model() if model is None else model
    inputs = case.make_inputs() if inputs is None else inputs
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(model, tuple(inputs), check_trace=False)
        traced.save(str(workdir / "case.pt"))
    except Exception as e:
        raise NotSupported(f"unsupported: torch.jit.trace: {type(e).__name__}: {e}".splitlines()[0],
                           traceback.format_exc()) from None
    return workdir / "case.pt"


def write_onnx(model, path: Path) -> None:
    """An ONNX-table case's graph, as a file."""
    import onnx

    onnx.save(model.onnx_model(), str(path))


def inputshape_arg(case) -> str:
    return f"inputshape={_shapes(case.inputs)}"


def shape_args(case) -> list[str]:
    """`inputshape=...`, and `inputshape2=...` for a case with a second shape."""
    return [inputshape_arg(case)] + second_shape_args(case)


def second_shape_args(case) -> list[str]:
    """`inputshape2=...` for a case with a second shape, else nothing."""
    second = getattr(case, "inputs2", ())
    return [f"inputshape2={_shapes(second)}"] if second else []


def varying_axes(case) -> list[list[int]]:
    """Per input, the axes its second shape changes (what an exporter makes dynamic); all
    empty for a case without one."""
    second = getattr(case, "inputs2", ()) or case.inputs
    return [[d for d, (a, b) in enumerate(zip(x.shape, y.shape)) if a != b] for x, y in zip(case.inputs, second)]


def _shapes(specs) -> str:
    return ",".join(f"[{','.join(str(d) for d in spec.shape)}]{spec.dtype}" for spec in specs)
