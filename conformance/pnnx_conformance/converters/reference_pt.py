"""`reference-pt`: the reference converter as users meet it with a traced model. The case is
traced and saved as case.pt exactly as for `upstream`, then `pnnxref case.pt` runs with the
arguments the upstream plug-in gives `pnnx`, in the case folder, by the route's conversion
server (forkserver.py, serial mode: one warmed interpreter runs the conversions one after
another, each from the same starting state)."""
from __future__ import annotations

import re
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import ConvertFailed, NotSupported
from .base import Converter
from .forkserver import ForkServer
from .upstream import FILES, TIMEOUT_S, shape_args, trace_to_pt

ENTRY = "pnnx_reference.cli:main"
# imported once by the server; torchvision is not: a .pt naming its ops must load it itself
_PRELOAD = ("pnnx_reference.cli", "pnnx_reference.api", "pnnx_reference.example_inputs",
            "pnnx_reference.frontends.torchscript")
DECLINED = re.compile(r"^warning: (\w+): (.*)$", re.MULTILINE)


class ReferencePtConverter(Converter):
    name = "reference-pt"
    in_process = True  # a conversion runs in a warmed server, not in an interpreter of its own

    def __init__(self) -> None:
        self._server = ForkServer(ENTRY, _PRELOAD, warm_up=f"{__name__}:warm_up", fork=False)

    def describe(self) -> str:
        return "pnnxref case.pt (torch.jit.trace, then the command line in the route's conversion server)"

    def argv(self, case, fp16: bool) -> list[str]:
        return ["case.pt", *shape_args(case), f"fp16={int(fp16)}"]

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        if "no-trace" in case.tags:
            raise NotSupported(f"unsupported: torch.jit.trace: {case.reasons.get('no-trace', 'not traceable')}")
        workdir.mkdir(parents=True, exist_ok=True)
        trace_to_pt(case, workdir, model, inputs)
        return run_pnnxref(self._server, self.name, case, workdir, self.argv(case, fp16), TIMEOUT_S)


def warm_up_model():
    """A tiny model for a conversion server's warm-up; its class name is no case's, so no
    TorchScript or torch.export name a child sees is taken by it."""
    import torch
    import torch.nn as nn

    class _ForkServerWarmUp(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1)
            self.linear = nn.Linear(4, 5)

        def forward(self, x):
            return self.linear(torch.relu(self.conv(x)) + 1)

    torch.manual_seed(0)
    return _ForkServerWarmUp().eval(), torch.rand(1, 2, 4, 4)


def convert_in(folder: Path, argv: list[str]) -> None:
    """`pnnxref ARGV` in `folder`, in this process (a conversion server's warm-up)."""
    import os

    from pnnx_reference.cli import main

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        main(argv)
    finally:
        os.chdir(cwd)


def warm_up() -> None:
    """The reference-pt conversion server's warm-up: a traced tiny model through `pnnxref warm.pt`."""
    import tempfile

    import torch

    model, x = warm_up_model()
    with tempfile.TemporaryDirectory(prefix="pnnx-forkserver-warm-up-") as folder:
        torch.jit.trace(model, (x,)).save(str(Path(folder) / "warm.pt"))
        convert_in(Path(folder), ["warm.pt", "inputshape=[1,2,4,4]f32", "fp16=0"])


def run_pnnxref(server: ForkServer, converter: str, case, workdir: Path, argv: list[str],
                timeout_s: float) -> Artefacts:
    """`pnnxref ARGV` in a child of `server`, in `workdir`: the artefacts it wrote, or ConvertFailed
    with its one error line."""
    done = server.run(argv, workdir, timeout_s)
    if done.timed_out:
        raise ConvertFailed(f"pnnxref did not finish in {timeout_s} s", done.output[-4000:])
    paths = {k: workdir / f for k, f in FILES.items() if (workdir / f).is_file()}
    if done.returncode != 0 or "pnnx.param" not in paths:
        why = error_line(done.output) or (f"pnnxref exited with {done.returncode}" if done.returncode
                                           else "pnnxref wrote no pnnx.param")
        raise ConvertFailed(why, done.output[-4000:])
    unsupported = {emitter: reason for emitter, reason in DECLINED.findall(done.output)}
    return Artefacts(converter, case.id, workdir, paths, unsupported, log=done.output[-4000:])


def error_line(output: str) -> str:
    """The command's one error line (`error: ...`), else the last line of a traceback."""
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("error: "):
            return line[len("error: "):]
    return lines[-1] if lines else ""
