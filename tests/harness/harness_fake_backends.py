"""Misbehaving plug-ins for the isolation tests, and a converter that writes nothing."""
from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends.base import Backend
from pnnx_conformance.converters.base import Converter


class NullConverter(Converter):
    name = "null"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        workdir.mkdir(parents=True, exist_ok=True)
        return Artefacts(self.name, case.id, workdir)


class _Misbehaving(Backend):
    consumes = ()
    precisions = {"fp32": None}

    def prepare(self, artefacts, precision):
        pass


class AbortBackend(_Misbehaving):
    name = "abort"

    def run(self, inputs):
        print("about to abort", flush=True)
        os.abort()


class SegfaultBackend(_Misbehaving):
    name = "segfault"

    def run(self, inputs):
        return ctypes.string_at(0)


class HangBackend(_Misbehaving):
    name = "hang"

    def run(self, inputs):
        time.sleep(3600)


class HogBackend(_Misbehaving):
    name = "hog"

    def run(self, inputs):
        # untouched pages: the address-space limit trips without loading the shared machine
        hoard = []
        while True:
            hoard.append(np.empty(1024 ** 3, dtype=np.uint8))


class WrongBackend(_Misbehaving):
    """Runs, but adds 1 to everything: a numeric failure."""

    name = "wrong"

    def run(self, inputs):
        return [np.asarray(x) + 1 for x in inputs]


class WrongAbortingInTheMainProcessBackend(WrongBackend):
    """Wrong in a worker; in the process whose pid PNNX_TEST_MAIN_PID names (the run's own) it
    aborts, as a GPU runtime torn down at the wrong time does: the run must never run a backend
    outside its workers."""

    name = "wrong-aborting"

    def run(self, inputs):
        if str(os.getpid()) == os.environ.get("PNNX_TEST_MAIN_PID"):
            os.abort()
        return super().run(inputs)


class RaisingBackend(_Misbehaving):
    name = "raising"

    def run(self, inputs):
        raise ValueError("kernel missing")


class DriftBackend(_Misbehaving):
    """Runs the generated `_pnnx.py` correctly, unless PNNX_TEST_DRIFT is set in its
    environment: then it adds 1 to every output (a runtime whose behaviour changed after it
    was certified; `verify-certificate --rerun` must catch it)."""

    name = "drift"
    consumes = ("pnnx.py", "pnnx.bin")

    def prepare(self, artefacts, precision):
        from pnnx_conformance.backends.pnnx_python import load_generated_model

        self.model = load_generated_model(artefacts.paths["pnnx.py"])

    def run(self, inputs):
        import torch

        with torch.no_grad():
            out = self.model(*[torch.from_numpy(np.asarray(x)) for x in inputs])
        outputs = [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]
        return [o + 1 for o in outputs] if os.environ.get("PNNX_TEST_DRIFT") else outputs


class DefaultModeBackend(WrongBackend):
    """Offers a "default" mode pre-rounded to fp16 that it reports computing in bf16 (as a
    CPU runtime with AMX resolves its default), and names the runtime it wraps."""

    name = "default-mode"
    precisions = {"fp32": None, "default": "fp16"}
    runtime = "numpy"
    device = "cpu:0"

    def compute_type(self, precision):
        return "bf16" if precision == "default" else super().compute_type(precision)


# what a C++ runtime's Python binding raises: where it was thrown first, the cause below
CXX_ERROR = ("Exception from src/inference/src/cpp/core.cpp:84:\n"
             "Exception from src/frontends/onnx/frontend/src/frontend.cpp:123:\n"
             "Check 'is_supported' failed at src/frontends/onnx/frontend/src/op/dft.cpp:51:\n"
             "DFT: signal dimension 3 is not supported\n")


class LoadFailingBackend(_Misbehaving):
    name = "load-failing"

    def prepare(self, artefacts, precision):
        raise RuntimeError(CXX_ERROR)

    def run(self, inputs):
        return list(inputs)


class CompileFailingBackend(_Misbehaving):
    name = "compile-failing"

    def compile(self):
        raise RuntimeError("cannot compile for this target")

    def run(self, inputs):
        return list(inputs)


class WrongShapeBackend(_Misbehaving):
    """Right values, one axis too many: a shape mismatch, not a numeric one."""

    name = "wrong-shape"

    def run(self, inputs):
        return [np.asarray(x)[None] for x in inputs]


class TorchBf16Backend(Backend):
    """The generated `_pnnx.py` run by torch in bfloat16: a runtime computing in bf16."""

    name = "torch-bf16"
    consumes = ("pnnx.py", "pnnx.bin")
    precisions = {"bf16": "bf16"}

    def prepare(self, artefacts, precision):
        import torch

        from pnnx_conformance.backends.pnnx_python import load_generated_model

        self.model = load_generated_model(artefacts.paths["pnnx.py"]).to(torch.bfloat16)

    def run(self, inputs):
        import torch

        with torch.no_grad():
            xs = [torch.from_numpy(np.asarray(x)) for x in inputs]
            out = self.model(*[x.to(torch.bfloat16) if x.is_floating_point() else x for x in xs])
        return [o.float().numpy() for o in (out if isinstance(out, tuple) else (out,))]


# A hand-written ncnn model that corrupts ncnn's heap: the empty past of a key/value cache
# (`MemoryData 0=0`, which ncnn reads as one element) concatenated onto keys and values read by SDPA with a mask, as the
# converter wrote LLaMA's cache once (issue 29). ncnn aborts or segfaults on it
# (sizes at which glibc's malloc checks caught it on every try: a smaller overflow can go unnoticed).
EMPTY_PAST_PARAM = """7767517
8 10
Input            in0    0 1 in0
Split            split  1 3 in0 q k1 k2
MemoryData       mask   0 1 mask 0=64 1=64
MemoryData       past0  0 1 past0 0=0
Concat           cat0   2 1 past0 k1 k 0=1
MemoryData       past1  0 1 past1 0=0
Concat           cat1   2 1 past1 k2 v 0=1
SDPA             sdpa   4 1 q k v mask out0 5=1 6=0.25
"""


class EmptyPastNcnnConverter(Converter):
    """Writes EMPTY_PAST_PARAM (its 64x64 mask of zeros in the bin) for a (1, 8, 64, 64) input."""

    name = "empty-past"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "m.ncnn.param").write_text(EMPTY_PAST_PARAM)
        (workdir / "m.ncnn.bin").write_bytes(bytes(64 * 64 * 4))
        return Artefacts(self.name, case.id, workdir, {"ncnn.param": workdir / "m.ncnn.param",
                                                       "ncnn.bin": workdir / "m.ncnn.bin"})
