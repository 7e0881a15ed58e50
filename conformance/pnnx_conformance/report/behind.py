"""Where one route falls behind another on the same run: every record the base passes and the
route does not, check by check and backend by backend (the `.pt` route against upstream's
converter, our ncnn columns against upstream's).

Known gaps are data, each with its reason, in `conformance/behind.toml`:

    [[gap]]
    route = "reference-pt"       # the route that falls behind
    base = "upstream"            # the route it is measured against
    case = "nn.Foo/*"            # fnmatch pattern on case ids
    check = "parity"             # optional, default "*"
    backend = "ncnn-vulkan"      # optional, default "*"; "-" for checks with no backend
    precision = "fp16"           # optional, default "*"
    error = "unsupported: torch.onnx.export*"   # optional: fnmatch on the route record's error
    reason = "..."

A gap nobody listed, and a listed gap the results no longer show (on a case they hold; an entry
with an error pattern names a kind of failure and is never stale), both fail the command (it is
strict, as a waiver that passes is an xpass). A waived record (xfail) is a gap
explained by its waiver. A route's `not-applicable` record is not a gap: the harness states its
reason by design (the ONNX route is not bit-identical, it does not re-export)."""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import HarnessError
from ..results import Result

DEFAULT_FILE = Path(__file__).resolve().parents[2] / "behind.toml"
NOT_A_GAP = {"pass", "not-applicable"}
FIELDS = ("route", "base", "case", "check", "backend", "precision", "error", "reason")


@dataclass(frozen=True)
class KnownGap:
    route: str
    base: str
    case: str
    reason: str
    check: str = "*"
    backend: str = "*"
    precision: str = "*"
    error: str = "*"

    def matches(self, base: Result, route: Result) -> bool:
        return (fnmatch.fnmatchcase(base.case, self.case) and self.check in ("*", base.check)
                and self.backend in ("*", base.backend or "-") and self.precision in ("*", base.precision or "-")
                and fnmatch.fnmatchcase(route.error, self.error))


@dataclass
class Behind:
    route: str
    base: str
    gaps: list[tuple[Result, Result, KnownGap | None]]  # base record, route record, listed as
    stale: list[KnownGap]  # listed, but the results show no such gap
    unplanned: int = 0  # base records with no record of the route (a unit the route does not plan)

    @property
    def unexplained(self) -> list[tuple[Result, Result]]:
        return [(b, r) for b, r, known in self.gaps if known is None]

    def lines(self) -> list[str]:
        out = []
        for b, r, known in self.gaps:
            where = " ".join(x for x in (b.check, b.backend or "", b.precision or "") if x)
            got = f"{r.status}: {r.error}"
            out.append(f"{'known' if known else 'NEW  '} {b.case} [{where}]: {got}"[:300])
        out += [f"stale {g.case} [{g.check} {g.backend} {g.precision}]: listed, but {self.route} no longer "
                f"falls behind here ({g.reason})" for g in self.stale]
        cases = len({b.case for b, _, _ in self.gaps})
        out.append(f"{self.route} falls behind {self.base} on {len(self.gaps)} records ({cases} cases): "
                   f"{len(self.gaps) - len(self.unexplained)} listed with a reason, {len(self.unexplained)} not; "
                   f"{len(self.stale)} listed gaps are gone; {self.unplanned} units of {self.base} are not "
                   f"planned for {self.route}")
        return out


def load_known(path: Path) -> list[KnownGap]:
    path = Path(path)
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(f"{path}: {e}") from None
    known = []
    for i, entry in enumerate(data.get("gap", []), 1):
        missing = [k for k in ("route", "base", "case", "reason") if not str(entry.get(k, "")).strip()]
        unknown = set(entry) - set(FIELDS)
        if missing or unknown:
            what = f"missing {', '.join(missing)}" if missing else f"unknown field {', '.join(sorted(unknown))}"
            raise HarnessError(f"{path}: gap {i}: {what}")
        known.append(KnownGap(**{k: str(v) for k, v in entry.items()}))
    return known


def behind(results: list[Result], route: str, base: str, known: list[KnownGap] = ()) -> Behind:
    """The records `base` passes and `route` does not, on the cases both ran."""
    by_key = {(r.converter, r.case, r.check, r.backend, r.precision): r for r in results}
    ran = {r.case for r in results if r.converter == route}
    listed = [g for g in known if g.route == route and g.base == base]
    gaps, used, unplanned = [], set(), 0
    for b in sorted((r for r in results if r.converter == base and r.status == "pass" and r.case in ran),
                    key=lambda r: (r.case, r.check, r.backend or "", r.precision or "")):
        r = by_key.get((route, b.case, b.check, b.backend, b.precision))
        if r is None:  # e.g. the zoo runs the torch oracle's own check once, not per route
            unplanned += 1
            continue
        if r.status in NOT_A_GAP:
            continue
        match = next((g for g in listed if g.matches(b, r)), None)
        if match is None and r.status == "xfail":  # waived: the waiver file holds the reason
            match = KnownGap(route, base, b.case, f"waived: {r.waiver}")
        if match is not None:
            used.add(match)
        gaps.append((b, r, match))
    cases = {r.case for r in results}
    # an entry for a kind of failure (an error pattern) is not stale where no record shows it
    stale = [g for g in listed if g not in used and g.error == "*" and any(fnmatch.fnmatchcase(c, g.case) for c in cases)]
    return Behind(route, base, gaps, stale, unplanned)
