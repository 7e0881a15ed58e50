"""pnnx.param text compared across conversion doors (the agreement tests of the `.pt` and
`.pt2` doors against the Python-API door)."""
from __future__ import annotations

import re

from pnnx_reference.formats import pnnx_param

_NAMES = re.compile(r"^(\S+)\s+\S+\s+")


def normalised_param(graph) -> list[str]:
    """The pnnx.param text with the operator-name column dropped (operands are already
    renumbered by canonicalisation)."""
    text = pnnx_param.dumps(graph)
    text = text[0] if isinstance(text, tuple) else text
    return [_NAMES.sub(r"\1 ", line) for line in text.splitlines()[2:]]
