"""What the passes may know beyond the graph: the values operands had while tracing."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Operand


@dataclass
class PassContext:
    values: dict[Operand, object] = field(default_factory=dict)
