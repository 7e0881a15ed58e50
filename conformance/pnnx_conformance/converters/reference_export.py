"""`reference-export`: the reference converter as users meet it with torch.export. The case
is exported with `torch.export.export` (a refusal is `unsupported` with torch's reason and
the source line), saved with `torch.export.save` as case.pt2, and `pnnxref case.pt2` converts
it in a fresh process, in the case folder, with no input shapes: the file holds them."""
from __future__ import annotations

import re
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import ConvertFailed, NotSupported
from .base import Converter
from .upstream import FILES, TIMEOUT_S

_DECLINED = re.compile(r"^warning: (\w+): (.*)$", re.MULTILINE)


@dataclass
class Done:
    returncode: int
    output: str
    timed_out: bool = False


def run_cli(argv: list[str], workdir: Path, timeout: float) -> Done:
    """`pnnxref ARGV` in `workdir`, in a fresh interpreter (one call: easy to swap for a fork server)."""
    try:
        proc = subprocess.run([sys.executable, "-m", "pnnx_reference.cli", *argv], cwd=workdir, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                              errors="replace")
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return Done(-1, out, timed_out=True)
    return Done(proc.returncode, proc.stdout)


def export_to_pt2(case, workdir: Path, model=None, inputs=None) -> Path:
    """case.pt2 in `workdir`: the case's model exported at its example inputs and saved."""
    import torch

    from pnnx_reference.errors import PnnxError
    from pnnx_reference.frontends.export import export_program
    from pnnx_reference.frontends.export.refusal import quiet

    model = case.make_model() if model is None else model
    inputs = case.make_inputs() if inputs is None else inputs
    try:
        program = export_program(model.eval(), tuple(inputs))
    except PnnxError as e:
        raise NotSupported(f"unsupported: {e}".splitlines()[0]) from None
    path = workdir / "case.pt2"
    try:
        with quiet():
            torch.export.save(program, str(path))
    except Exception as e:  # torch cannot serialise what it exported (quantized tensors, return types)
        raise NotSupported(f"unsupported: torch.export.save: {type(e).__name__}: {e}".splitlines()[0],
                           traceback.format_exc()) from None
    return path


class ReferenceExportConverter(Converter):
    name = "reference-export"
    in_process = False  # a conversion costs an interpreter start
    timeout_s = TIMEOUT_S

    def describe(self) -> str:
        return "pnnxref case.pt2 (torch.export.export + torch.export.save, then the command line in a fresh process)"

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        workdir.mkdir(parents=True, exist_ok=True)
        export_to_pt2(case, workdir, model, inputs)
        done = run_cli(["case.pt2", f"fp16={int(fp16)}"], workdir, self.timeout_s)
        if done.timed_out:
            raise ConvertFailed(f"pnnxref did not finish in {self.timeout_s} s", done.output[-4000:])
        paths = {k: workdir / f for k, f in FILES.items() if (workdir / f).is_file()}
        if done.returncode != 0 or "pnnx.param" not in paths:
            why = _error_line(done.output) or (f"pnnxref exited with {done.returncode}" if done.returncode
                                               else "pnnxref wrote no pnnx.param")
            raise ConvertFailed(why, done.output[-4000:])
        unsupported = {emitter: reason for emitter, reason in _DECLINED.findall(done.output)}
        return Artefacts(self.name, case.id, workdir, paths, unsupported, log=done.output[-4000:])


def _error_line(output: str) -> str:
    """The command's one error line (`error: ...`), else the last line it printed."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("error: "):
            return line[len("error: "):]
    return lines[-1] if lines else ""
