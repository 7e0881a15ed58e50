"""The torch eager backend: the case model itself, rebuilt from its source (the oracle)."""
from __future__ import annotations

from .base import Backend
from ..oracle import build_model, to_numpy, to_torch


class TorchModuleBackend(Backend):
    """Runs a torch.nn.Module that `prepare` puts in `self.model`."""

    def run(self, inputs):
        import torch

        with torch.no_grad():
            out = self.model(*[to_torch(x) for x in inputs])
        return to_numpy(out)

    def release(self):
        self.model = None


class TorchBackend(TorchModuleBackend):
    name = "torch"
    consumes = ()
    precisions = {"fp32": None}
    runtime = "torch"

    def prepare(self, artefacts, precision):
        from ..cases import load_case

        self.model = build_model(load_case(artefacts.case_id), self.precisions[precision])

    def describe(self):
        import torch

        return {"name": self.name, "version": torch.__version__}
