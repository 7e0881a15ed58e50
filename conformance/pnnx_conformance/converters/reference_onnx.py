"""The reference converter's ONNX route: the case as an `.onnx` file, converted by
`pnnxref case.onnx` in a fresh process, as a user would run it.

An ONNX-table case is its own `.onnx` (the graph the source builds, initializers at the model's
current values). A PyTorch case is exported first with `torch.onnx.export`: the
TorchScript-based exporter (`reference-onnx`) or the `dynamo=True` one (`reference-onnx-dynamo`);
a model the exporter cannot export is "unsupported: torch.onnx.export: ..." (as upstream's
torch.jit.trace failures are), not a failure of the frontend."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import ConvertFailed, NotApplicable, NotSupported
from .base import Converter
from .upstream import FILES, inputshape_arg

OPSET = 18  # for the TorchScript-based exporter: LayerNormalization (17) and GroupNormalization (18) whole


def is_onnx_case(case) -> bool:
    return "onnx" in case.tags


def write_onnx(model, path: Path) -> None:
    """An ONNX-table case's graph, as a file."""
    import onnx

    onnx.save(model.onnx_model(), str(path))


def export_torch(model, inputs, path: Path, dynamo: bool) -> None:
    import torch

    names = [f"x{i}" for i in range(len(inputs))]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        if dynamo:
            torch.onnx.export(model, tuple(inputs), str(path), dynamo=True, input_names=names, verbose=False)
        else:
            torch.onnx.export(model, tuple(inputs), str(path), dynamo=False, input_names=names, opset_version=OPSET)


def _check_inputs_kept(path: Path, count: int) -> None:
    """The exporter drops the inputs a model does not read; the file then cannot be fed the case."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    kept = [v.name for v in model.graph.input if v.name not in initializers]
    if len(kept) != count:
        raise NotSupported(f"unsupported: torch.onnx.export kept {len(kept)} of the model's {count} inputs "
                           f"(it drops inputs the graph does not read)")


class ReferenceOnnxConverter(Converter):
    name = "reference-onnx"
    in_process = False
    reexports = False  # see check_reexport: the ONNX route names operators after a second export's nodes
    bit_identical = False  # see check_roundtrip: exporters decompose operators
    dynamo = False
    timeout_s = 180

    def describe(self) -> str:
        exporter = "torch.onnx.export(dynamo=True)" if self.dynamo else "torch.onnx.export (TorchScript-based)"
        return f"{exporter} -> python -m pnnx_reference.cli case.onnx"

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
                export_torch(model, inputs, path, self.dynamo)
            except Exception as e:
                raise NotSupported(f"unsupported: torch.onnx.export: {type(e).__name__}: {e}".splitlines()[0][:300],
                                   traceback.format_exc()[-4000:]) from None
            _check_inputs_kept(path, len(inputs))
        proc = self._run(case, workdir, fp16)
        paths = {k: workdir / f for k, f in FILES.items() if (workdir / f).is_file()}
        if proc.returncode != 0 or "pnnx.param" not in paths:
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("error: ")]
            why = lines[-1][len("error: "):] if lines else f"pnnxref exited with {proc.returncode}"
            raise ConvertFailed(why.replace(str(workdir), "<work>"), proc.stdout[-4000:])
        unsupported = {}
        for line in proc.stdout.splitlines():
            if line.startswith("warning: ") and ": " in line[len("warning: "):]:
                emitter, message = line[len("warning: "):].split(": ", 1)
                unsupported[emitter] = message
        return Artefacts(self.name, case.id, workdir, paths, unsupported, log=proc.stdout[-4000:])

    def _run(self, case, workdir: Path, fp16: bool) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "pnnx_reference.cli", "case.onnx", inputshape_arg(case), f"fp16={int(fp16)}"]
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        try:
            return subprocess.run(command, cwd=workdir, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=self.timeout_s, errors="replace", env=env)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            raise ConvertFailed(f"pnnxref did not finish in {self.timeout_s} s", out[-4000:]) from None


class ReferenceOnnxDynamoConverter(ReferenceOnnxConverter):
    name = "reference-onnx-dynamo"
    dynamo = True
