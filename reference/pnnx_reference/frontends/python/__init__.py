"""Capture a PyTorch model at the level of the Python API into the pnnx IR."""
from __future__ import annotations

from .trace import Capture, trace

__all__ = ["Capture", "trace"]
