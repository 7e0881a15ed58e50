"""The reference converter's ONNX route: the case as an `.onnx` file, converted by
`pnnxref case.onnx` in the route's conversion server (forkserver.py, serial mode), as a
user would run it.

An ONNX-table case is its own `.onnx` (the graph the source builds, initializers at the model's
current values). A PyTorch case is exported first with `torch.onnx.export`: the
TorchScript-based exporter (`reference-onnx`) or the `dynamo=True` one (`reference-onnx-dynamo`);
a model the exporter cannot export is "unsupported: torch.onnx.export: ..." (as upstream's
torch.jit.trace failures are), not a failure of the frontend. A case with a second shape is
exported with the axes it changes dynamic (symbolic dims) and converted with `inputshape2=`."""
from __future__ import annotations

import contextlib
import io
import traceback
import warnings
from pathlib import Path

from pnnx_op_cases.case import TAG_RANDOM

from ..artefacts import Artefacts
from ..errors import ConvertFailed, NotApplicable, NotSupported
from .base import Converter
from .case_files import shape_args, varying_axes, write_onnx
from .forkserver import ForkServer
from .pnnxref import ENTRY, run_pnnxref

# imported once by the server, so a conversion does not start an interpreter
_PRELOAD = ("onnx", "pnnx_reference.cli", "pnnx_reference.api", "pnnx_reference.frontends.onnx")
OPSET = 18  # for the TorchScript-based exporter: LayerNormalization (17) and GroupNormalization (18) whole


def is_onnx_case(case) -> bool:
    return "onnx" in case.tags


def export_torch(model, inputs, path: Path, dynamo: bool, axes: list[list[int]] | None = None) -> None:
    """torch.onnx.export of the model at `inputs`, inputs named x0, x1, ...; `axes` (per input)
    are exported dynamic: symbolic dims in the file (dynamo: `Dim.AUTO`)."""
    import torch

    names = [f"x{i}" for i in range(len(inputs))]
    axes = axes if axes and any(axes) else None
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        if dynamo:
            shapes = None if axes is None else tuple({d: torch.export.Dim.AUTO for d in a} or None for a in axes)
            torch.onnx.export(model, tuple(inputs), str(path), dynamo=True, input_names=names, verbose=False,
                              dynamic_shapes=shapes)
        else:
            dynamic = None if axes is None else {n: {d: f"{n}_{d}" for d in a} for n, a in zip(names, axes) if a}
            torch.onnx.export(model, tuple(inputs), str(path), dynamo=False, input_names=names, opset_version=OPSET,
                              dynamic_axes=dynamic)


def _check_inputs_kept(path: Path, count: int) -> None:
    """The exporter drops the inputs a model does not read; the file then cannot be fed the case."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    kept = [v.name for v in model.graph.input if v.name not in initializers]
    if len(kept) != count:
        raise NotSupported(f"unsupported: torch.onnx.export kept {len(kept)} of the model's {count} inputs "
                           f"(it drops inputs the graph does not read)")


def run_onnxruntime(path: Path, inputs) -> list:
    """torch.onnx's file run by onnxruntime on the case's inputs (named x0, x1, ... at export)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {f"x{i}": x.detach().cpu().numpy() for i, x in enumerate(inputs)})


def unusable_export(path: Path, inputs) -> str | None:
    """Why an exported file is no valid model of the case (the ONNX checker refuses it, or
    onnxruntime cannot run it on the case's inputs: torch.onnx writes an unbatched 1-d pool as a
    pool of a rank-2 tensor, which ONNX does not define), or None. Asked only when our conversion
    failed: then the failure is the exporter's, not the frontend's."""
    import onnx

    try:
        onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    except Exception as e:
        return f"a file the ONNX checker refuses: {_first_line(e)}"
    try:
        run_onnxruntime(path, inputs)
    except Exception as e:
        return f"a file onnxruntime cannot run: {_first_line(e)}"
    return None


def unfaithful_export(case, model, inputs, path: Path) -> str | None:
    """unfaithful_at (below) at the case's inputs, then at its second shape where it has one
    (an exporter that froze a size computes something else there)."""
    why = unfaithful_at(case, model, inputs, path)
    second = getattr(case, "make_inputs2", lambda: None)()
    if why is None and second:
        why = unfaithful_at(case, model, second, path)
        return why and f"{why} at inputshape2"
    return why


def unfaithful_at(case, model, inputs, path: Path) -> str | None:
    """Whether the exported file computes something else than the model: onnxruntime on it against
    torch, within the screen's coarse bound (tolerances.EXPORT_SCREEN), or None. torch.onnx writes
    some operators wrongly (an unbatched global pool pools the channels, pairwise_distance drops
    the abs(), floor_divide truncates); our frontend converts the file it is given, so comparing
    its artefacts with torch would judge the exporter. A file onnxruntime cannot run is judged
    only if our conversion fails too (unusable_export), and a random case is not compared."""
    import torch

    from ..compare import compare
    from ..oracle import to_numpy
    from ..tolerances import export_screen

    if TAG_RANDOM in case.tags:
        return None
    try:
        got = run_onnxruntime(path, inputs)
    except Exception:
        return None
    with torch.no_grad():
        expected = to_numpy(model(*[x.clone() for x in inputs]))
    verdict = compare(got, expected, export_screen(case))
    return None if verdict.ok else f"a file that computes something else (onnxruntime on it, against torch: " \
                                   f"{verdict.message})"


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


class ReferenceOnnxConverter(Converter):
    name = "reference-onnx"
    in_process = True  # a conversion runs in a warmed server, not in an interpreter of its own
    reexports = False  # see check_reexport: the ONNX route names operators after a second export's nodes
    bit_identical = False  # see check_roundtrip: exporters decompose operators
    dynamo = False
    timeout_s = 180

    def __init__(self) -> None:
        self._server = ForkServer(ENTRY, _PRELOAD, fork=False)

    def describe(self) -> str:
        exporter = "torch.onnx.export(dynamo=True)" if self.dynamo else "torch.onnx.export (TorchScript-based)"
        return f"{exporter} -> pnnxref case.onnx (the command line in the route's conversion server)"

    def argv(self, case, fp16: bool) -> list[str]:
        return ["case.onnx", *shape_args(case), f"fp16={int(fp16)}"]

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        model = case.make_model() if model is None else model
        inputs = case.make_inputs() if inputs is None else inputs
        workdir.mkdir(parents=True, exist_ok=True)
        path = workdir / "case.onnx"
        if is_onnx_case(case):
            if self.dynamo:
                raise NotApplicable("not applicable: an ONNX case is not exported; reference-onnx converts it")
            write_onnx(model, path)
        else:
            try:
                export_torch(model, inputs, path, self.dynamo, varying_axes(case))
            except Exception as e:
                raise NotSupported(f"unsupported: torch.onnx.export: {type(e).__name__}: {e}".splitlines()[0][:300],
                                   traceback.format_exc()[-4000:]) from None
            _check_inputs_kept(path, len(inputs))
            why = unfaithful_export(case, model, inputs, path)
            if why:
                raise NotSupported(f"unsupported: torch.onnx.export wrote {why}"[:300])
        try:
            return run_pnnxref(self._server, self.name, case, workdir, self.argv(case, fp16), self.timeout_s)
        except ConvertFailed:
            why = None if is_onnx_case(case) else unusable_export(path, inputs)
            if why:
                raise NotSupported(f"unsupported: torch.onnx.export wrote {why}"[:300]) from None
            raise


class ReferenceOnnxDynamoConverter(ReferenceOnnxConverter):
    name = "reference-onnx-dynamo"
    dynamo = True
