"""The converter plug-in interface."""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from ..artefacts import Artefacts


class Converter(ABC):
    """Turns one case's model into artefacts in `workdir`.

    `convert` raises errors.NotSupported for a clean "unsupported: reason" and
    errors.ConvertFailed when it fails on something it should handle. `model` is the
    model to convert (the case's own, or its fp16-pre-rounded copy); `inputs` the example
    inputs (torch tensors). `fp16` asks for weights stored as fp16 in the ncnn artefacts
    (the harness asks for it only with a model whose weights are already fp16-exact, so
    fp32 parity measures kernels, not storage).
    """

    name: str = ""
    # False where a conversion costs a process start (upstream): the re-export check then
    # runs in the full tier only, to keep the default tier inside its time budget
    in_process: bool = True
    # False where the route itself rewrites operators (an ONNX export): the roundtrip and re-export
    # checks (bit-identity, pnnx.param as a fixed point) are then not applicable
    bit_identical: bool = True
    reexports: bool = True

    @abstractmethod
    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts: ...

    def close(self) -> None:
        """Stop what the converter keeps running (a fork server in `self._server`); the worker
        calls it before it exits, so the server's time is its worker's."""
        server = getattr(self, "_server", None)
        if server is not None:
            server.close()

    def describe(self) -> str:
        """Version or command line, for the environment record."""
        return self.name
