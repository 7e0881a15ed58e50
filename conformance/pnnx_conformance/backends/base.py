"""The backend plug-in interface: the contract between the suite and a runtime's plug-in.

A backend is a class registered under the entry-point group `pnnx_conformance.backends`
(or named "module:Class" on the command line). The harness makes one instance per worker
process and reuses it across cases:

    backend.prepare(artefacts, precision)   once per case and precision: load the artefacts
    backend.compile()                       optional: build/compile what prepare loaded
    backend.run(inputs) -> outputs          numpy arrays in, numpy arrays out
    backend.release()                       after the case

Identity. `name` is the backend: results, reports and certificates call it by its name,
whether the command line gave the entry-point name or "module:Class". `runtime` names the
distribution of the runtime it wraps (its pip name, e.g. "openvino"); a certificate records
that distribution's version and the plug-in package's own (the distribution that installs
the backend class's module), both read from the installed distributions, and
`verify-certificate --rerun` refuses other versions. `describe()` adds what else identifies
it (a device, options) to the environment record; `device` names the device it runs on.

Precision modes. `precisions` maps each mode the backend offers to the rounding the oracle
applies to the weights and inputs first (ROUNDINGS):

    None    no rounding: fp32 weights and inputs, fp32 artefacts
    "fp16"  through float16 first (ncnn weights stored as fp16), so only kernel error is measured
    "bf16"  through bfloat16 first

`compute_type(mode)` says what the runtime computes in for that mode ("fp32", "fp16",
"bf16"); by default the rounding, but a mode the runtime resolves itself ("default": bf16
on a CPU with AMX, fp16 on a GPU) must report what it resolved to. The tolerance row that
judges a mode (tolerances.tolerance_for) is the table's row for (name, mode) if there is one,
else ("*", what the mode computes in): fp32 1e-4, fp16 1e-2 (unit 2^-11), bf16 8e-2 (unit
2^-8), each K-scaled for accumulating operators; see tolerances.TABLE for the reasons.

Artefacts. `consumes` names the artefact kinds it needs (pnnx.param+pnnx.bin, pnnx.py,
pnnx.onnx, ncnn.param+ncnn.bin); a case whose converter wrote none is not-supported.
Complex tensors: complex_io (numpy complex arrays in and out; pnnx.onnx carries them as reals
with a trailing (real, imaginary) axis named in its metadata).

Threads. `--jobs N` runs N worker processes, each one unit at a time, on a machine sized for
N: a backend uses `threads` (1) threads, set explicitly for runtimes with their own pools
(intra- and inter-op: onnxruntime, OpenVINO, TVM, MNN); OMP_NUM_THREADS=1 is set in each
worker. Results must not depend on the thread count.

Failures. `applicable(case)` returns a reason the backend cannot run a case at all;
`prepare`, `compile` or `run` raise errors.NotSupported for a clean "unsupported: reason" and
any other exception for a failure, recorded with its stage (load, compile, run) and the
line of its message that names the cause. Crashes, hangs and memory blow-ups are contained
by the worker processes.

Reuse. A backend whose outputs are a function of its artefacts and the inputs sets `pure`:
the harness then runs identical artefacts once per case and precision (the routes of one
case often write the same ncnn files) and judges the other routes' records on those
outputs. `content(artefacts)` lists everything such a backend's outputs depend on (files,
hashed by their bytes, and what it derives from other files).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..artefacts import Artefacts


ROUNDINGS = (None, "fp16", "bf16")   # the pre-roundings the oracle knows (oracle.round_model)


class Backend(ABC):
    name: str = ""
    consumes: tuple[str, ...] = ()
    precisions: dict[str, str | None] = {"fp32": None}
    device: str = ""  # filled in by prepare() where the backend runs on a named device
    pure: bool = False
    runtime: str = ""  # the distribution (pip name) of the runtime wrapped, e.g. "onnxruntime"
    threads: int = 1   # threads the runtime may use: one per worker

    def applicable(self, case) -> str | None:
        """A reason this backend cannot run `case` at all, or None."""
        return None

    @abstractmethod
    def prepare(self, artefacts: Artefacts, precision: str) -> None: ...

    def compile(self) -> None:
        """Optional: compile what prepare() loaded (a failure here is a compile failure)."""

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
