"""The upstream `pnnx` command: trace to a .pt, run the command in the scratch folder."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import ConvertFailed, NotSupported
from .base import Converter
from .case_files import FILES, TIMEOUT_S, shape_args, trace_to_pt, write_onnx
from .native_forkserver import NativeForkServer
from .pnnxref import traced_warm_up


def pnnx_command() -> str | None:
    """The upstream converter. The PyPI package's `pnnx` console script only execs the binary
    bundled in the package, after importing torch (seconds per call): run the binary itself."""
    env = os.environ.get("PNNX_UPSTREAM")
    if env:
        return env
    spec = importlib.util.find_spec("pnnx")
    if spec is not None and spec.submodule_search_locations:
        bundled = Path(list(spec.submodule_search_locations)[0]) / "pnnx"
        if bundled.is_file() and os.access(bundled, os.X_OK):
            return str(bundled)
    beside = Path(sys.executable).parent / "pnnx"
    return str(beside) if beside.is_file() else shutil.which("pnnx")


class UpstreamConverter(Converter):
    name = "upstream"
    in_process = False  # a conversion is still a process of its own (a fork, see native_forkserver.py)

    def __init__(self) -> None:
        exe = pnnx_command()
        self._server = NativeForkServer(exe, traced_warm_up) if exe and NativeForkServer.available() else None

    def describe(self) -> str:
        return f"upstream pnnx ({pnnx_command()})"

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        exe = pnnx_command()
        if exe is None:
            raise ConvertFailed("the upstream pnnx command was not found: pip install 'pnnx-conformance[upstream]'")
        if "no-trace" in case.tags:
            raise NotSupported(f"unsupported: torch.jit.trace: {case.reasons.get('no-trace', 'not traceable')}")
        workdir.mkdir(parents=True, exist_ok=True)
        model = case.make_model() if model is None else model
        if "onnx" in case.tags and hasattr(model, "onnx_model"):  # upstream pnnx reads .onnx too
            write_onnx(model, workdir / "case.onnx")
            proc = self._run_file(exe, case, workdir, fp16, "case.onnx")
        else:
            self._trace(case, workdir, model, inputs)
            proc = self._run(exe, case, workdir, fp16)
        paths = {k: workdir / f for k, f in FILES.items() if (workdir / f).is_file()}
        if proc.returncode != 0 or "pnnx.param" not in paths:
            why = f"pnnx exited with {proc.returncode}" if proc.returncode else "pnnx wrote no pnnx.param"
            raise ConvertFailed(why, proc.stdout[-4000:])
        unsupported = {}
        if "ncnn.param" not in paths:
            unsupported["ncnn"] = "upstream pnnx wrote no ncnn.param"
        if "pnnx.onnx" not in paths:
            unsupported["onnx"] = "upstream pnnx wrote no pnnx.onnx"
        return Artefacts(self.name, case.id, workdir, paths, unsupported, log=proc.stdout[-4000:])

    @staticmethod
    def _trace(case, workdir: Path, model, inputs) -> None:
        trace_to_pt(case, workdir, model, inputs)

    def _run(self, exe: str, case, workdir: Path, fp16: bool) -> subprocess.CompletedProcess:
        return self._run_file(exe, case, workdir, fp16, "case.pt")

    def _run_file(self, exe: str, case, workdir: Path, fp16: bool, source: str) -> subprocess.CompletedProcess:
        return self.command(exe, [source, *shape_args(case), f"fp16={int(fp16)}"], workdir, TIMEOUT_S)

    def command(self, exe: str, argv: list[str], workdir: Path, timeout_s: float) -> subprocess.CompletedProcess:
        """`exe ARGV` in `workdir`, output and error together: a fork of the worker's started
        command where the native fork server is available, else a process of its own."""
        if self._server is not None and self._server.exe == exe:
            done = self._server.run(argv, workdir, timeout_s)
            if done.timed_out:
                raise ConvertFailed(f"pnnx did not finish in {timeout_s:g} s", done.output[-4000:])
            return subprocess.CompletedProcess([exe, *argv], done.returncode, done.output)
        try:
            return subprocess.run([exe, *argv], cwd=workdir, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=timeout_s, errors="replace")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            raise ConvertFailed(f"pnnx did not finish in {timeout_s:g} s", out[-4000:]) from None
