"""The backend plug-in interface.

A backend is a class registered under the entry-point group `pnnx_conformance.backends`
(or named "module:Class" on the command line). The harness makes one instance per worker
process and reuses it across cases:

    backend.prepare(artefacts, precision)   once per case and precision
    backend.run(inputs) -> outputs          numpy arrays in, numpy arrays out
    backend.release()                       after the case

`consumes` names the artefact kinds it needs; `precisions` maps each precision mode it
offers to the dtype the harness pre-rounds inputs and weights to for that mode (None: no
rounding; "fp16": values go through float16 first, so only kernel error is measured).
A backend whose outputs are a function of its artefacts and the inputs sets `pure`: the
harness then runs identical artefacts once per case and precision (the routes of one case
often write the same ncnn files) and judges the other routes' records on those outputs.
`content(artefacts)` lists everything such a backend's outputs depend on (files, hashed by
their bytes, and what it derives from other files).
`prepare` or `run` raise errors.NotSupported for a clean "unsupported: reason" and any
other exception for a runtime failure.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..artefacts import Artefacts


class Backend(ABC):
    name: str = ""
    consumes: tuple[str, ...] = ()
    precisions: dict[str, str | None] = {"fp32": None}
    device: str = ""  # filled in by prepare() where the backend runs on a named device
    pure: bool = False
    runtime: str = ""  # the distribution (pip name) of the runtime wrapped, e.g. "onnxruntime"

    def applicable(self, case) -> str | None:
        """A reason this backend cannot run `case` at all, or None."""
        return None

    @abstractmethod
    def prepare(self, artefacts: Artefacts, precision: str) -> None: ...

    @abstractmethod
    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]: ...

    def content(self, artefacts: Artefacts) -> list:
        """A pure backend's dependencies: paths (read by their bytes) and bytes."""
        return [artefacts.paths.get(kind) for kind in self.consumes]

    def release(self) -> None:
        """Drop per-case state; the instance is reused for the next case."""

    def compute_type(self, precision: str) -> str:
        """The type the runtime computes in for `precision` ("fp32", "fp16", "bf16"): by default
        the mode's pre-rounding; a mode such as "default" that the runtime resolves itself
        (bf16 on a CPU with AMX, say) reports what it resolved to."""
        return self.precisions[precision] or "fp32"

    def describe(self) -> dict:
        """Name, version and device, for the environment record."""
        return {"name": self.name, "device": self.device}
