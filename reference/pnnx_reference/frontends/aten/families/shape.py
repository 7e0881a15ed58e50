"""Shape queries."""
from __future__ import annotations

from ..registry import rule


@rule("size")
def _size(name, kw):
    return kw["self"].size(kw["dim"]) if "dim" in kw else kw["self"].size()
