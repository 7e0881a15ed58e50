"""The TorchScript (`.pt`) frontend: `load(path)` rebuilds the file as an `nn.Module` whose
forward replays the TorchScript graph through the Python API, so the Python-API tracer, the
passes and the emitters are shared with the Python door."""
from __future__ import annotations

from .loader import TracedFile, load, read, rebuild

__all__ = ["TracedFile", "load", "read", "rebuild"]
