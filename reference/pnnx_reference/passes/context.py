"""What the passes may know beyond the graph: the values operands had while tracing."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Operand


@dataclass
class PassContext:
    values: dict[Operand, object] = field(default_factory=dict)
    # the traced values of the self-check's other input sets (inputshape2), kept in step
    other_values: list[dict[Operand, object]] = field(default_factory=list)

    def takes_over(self, operand: Operand, replaced: Operand) -> None:
        """`operand` now computes what `replaced` did (a batchnorm folded into its conv): its traced
        value becomes `replaced`'s, so the self-check does not hold it to its old one."""
        for values in (self.values, *self.other_values):
            if replaced in values:
                values[operand] = values[replaced]
            else:
                values.pop(operand, None)
