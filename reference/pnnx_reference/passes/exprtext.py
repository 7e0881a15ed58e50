"""Helpers for editing `pnnx.Expression` text: re-indexing `@i` references."""
from __future__ import annotations

import re

_REF = re.compile(r"@(\d+)")


def substitute(text: str, replace) -> str:
    """Replace every `@i` in `text` by `replace(i)` (a string)."""
    return _REF.sub(lambda m: replace(int(m.group(1))), text)


class InputList:
    """The inputs of a rewritten expression, each distinct operand once, in first-use order."""

    def __init__(self):
        self.operands: list = []

    def ref(self, operand) -> str:
        for i, o in enumerate(self.operands):
            if o is operand:
                return f"@{i}"
        self.operands.append(operand)
        return f"@{len(self.operands) - 1}"
