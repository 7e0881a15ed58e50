"""`reference-pt`: the reference converter as users meet it with a traced model. The case is
traced and saved as case.pt exactly as for `upstream`, then `pnnxref case.pt` runs with the
arguments the upstream plug-in gives `pnnx`, in the case folder, by the route's conversion
server (forkserver.py, serial mode: one warmed interpreter runs the conversions one after
another, each from the same starting state)."""
from __future__ import annotations

from pathlib import Path

from ..artefacts import Artefacts
from ..errors import NotSupported
from .base import Converter
from .case_files import TIMEOUT_S, shape_args, trace_to_pt
from .forkserver import ForkServer
from .pnnxref import ENTRY, convert_in, run_pnnxref, traced_warm_up

# imported once by the server; torchvision is not: a .pt naming its ops must load it itself
_PRELOAD = ("pnnx_reference.cli", "pnnx_reference.api", "pnnx_reference.example_inputs",
            "pnnx_reference.frontends.torchscript")


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


def warm_up() -> None:
    """The reference-pt conversion server's warm-up: a traced tiny model through `pnnxref warm.pt`."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pnnx-forkserver-warm-up-") as folder:
        convert_in(Path(folder), traced_warm_up(Path(folder)))
