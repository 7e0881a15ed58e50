"""The aten rule table (filled by the modules under `families/`)."""
from __future__ import annotations

from ...registry import Registry

RULES = Registry("aten", "aten operator name (no `aten::`) -> fn(name, kwargs) calling the Python API",
                 doors=(".pt", ".pt2"))

rule = RULES.register
