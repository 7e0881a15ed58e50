"""What the routes that run `pnnxref` on a file (reference-pt, reference-export, reference-onnx)
share: the command's entry point, one conversion in a child of the route's conversion server
(forkserver.py) read back as artefacts or one error line, and the tiny model a server warms
up on."""
from __future__ import annotations

import re
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import ConvertFailed
from .case_files import FILES
from .forkserver import ForkServer

ENTRY = "pnnx_reference.cli:main"
DECLINED = re.compile(r"^warning: (\w+): (.*)$", re.MULTILINE)


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


def traced_warm_up(folder: Path) -> list[str]:
    """The tiny model traced into folder/warm.pt; the command-line arguments that convert it
    (what the `.pt` servers, ours and upstream's, warm up on)."""
    import torch

    model, x = warm_up_model()
    torch.jit.trace(model, (x,)).save(str(folder / "warm.pt"))
    return ["warm.pt", "inputshape=[1,2,4,4]f32", "fp16=0"]


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
