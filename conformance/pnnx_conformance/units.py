"""A unit of work: one case x converter x check [x backend x precision] -> one Result."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Unit:
    case: str
    converter: str
    check: str
    backend: str | None = None
    precision: str | None = None

    @property
    def id(self) -> str:
        parts = [self.case, self.converter, self.check, self.backend, self.precision]
        return "::".join(p for p in parts if p)

    def to_dict(self) -> dict:
        return asdict(self)


PER_CONVERTER_CHECKS = ("convert", "format", "roundtrip", "reexport")


def plan(cases, converters: list[str], backends: dict, reexport: set[str] | None = None) -> list[Unit]:
    """Every unit for `cases`, grouped by case (a case's units run in one worker, in order).
    `backends` maps a backend spec to its instance (for its precision modes); `reexport`
    names the converters that get the re-export check (None: all)."""
    units = []
    for case in cases:
        for conv in converters:
            checks = [c for c in PER_CONVERTER_CHECKS if c != "reexport" or reexport is None or conv in reexport]
            units += [Unit(case.id, conv, check) for check in checks]
            for spec, backend in backends.items():
                units += [Unit(case.id, conv, "parity", spec, p) for p in backend.precisions]
    return units
