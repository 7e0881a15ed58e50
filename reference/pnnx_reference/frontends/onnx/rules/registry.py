"""The ONNX rule table itself (see `__init__.py`); the rule families register on it."""
from __future__ import annotations

from ....registry import Registry

RULES = Registry("onnx-frontend", "ONNX op type -> fn(ctx) replaying it through the PyTorch Python API",
                 doors=(".onnx",))
