"""Compare two result sets (e.g. before and after an ncnn or torch upgrade)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..results import Result
from .summary import GOOD


@dataclass
class ResultDiff:
    newly_failing: list[tuple[Result | None, Result]] = field(default_factory=list)
    newly_passing: list[tuple[Result | None, Result]] = field(default_factory=list)
    changed_failure: list[tuple[Result, Result]] = field(default_factory=list)  # failing both, other status
    missing: list[Result] = field(default_factory=list)    # in old, not in new
    added: list[Result] = field(default_factory=list)      # in new, not in old

    def lines(self) -> list[str]:
        out = []
        for title, pairs in (("newly failing", self.newly_failing), ("newly passing", self.newly_passing),
                             ("failure changed", self.changed_failure)):
            out.append(f"{title}: {len(pairs)}")
            for old, new in pairs:
                was = old.status if old else "absent"
                out.append(f"  {describe(new)}: {was} -> {new.status}" + (f"  ({new.error})" if new.error else ""))
        out.append(f"missing from new: {len(self.missing)}")
        out += [f"  {describe(r)}" for r in self.missing[:50]]
        return out


def describe(r: Result) -> str:
    where = " ".join(x for x in (r.converter, r.check, r.backend or "", r.precision or "") if x)
    return f"{r.case} [{where}]"


def diff_results(old: list[Result], new: list[Result]) -> ResultDiff:
    old_by = {r.key: r for r in old}
    new_by = {r.key: r for r in new}
    d = ResultDiff()
    for key, n in sorted(new_by.items()):
        o = old_by.get(key)
        n_ok = n.status in GOOD
        if o is None:
            d.added.append(n)
            if not n_ok:
                d.newly_failing.append((None, n))
            continue
        o_ok = o.status in GOOD
        if o_ok and not n_ok:
            d.newly_failing.append((o, n))
        elif n_ok and not o_ok:
            d.newly_passing.append((o, n))
        elif not n_ok and o.status != n.status:
            d.changed_failure.append((o, n))
    d.missing = [o for k, o in sorted(old_by.items()) if k not in new_by]
    return d
