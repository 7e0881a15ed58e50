"""Balanced shards: `run --shard K/N` splits the selected cases by their measured cost, not
by their count, and every machine computes the same plan on its own.

Costs live in `reports/case_costs.json` (committed): per case, the seconds of worker time
its records took (the sum of their `time_s`) for each converter, learnt from earlier runs
(`pnnx-conformance plan --learn RESULTS`). A case never measured for a converter costs the
median of its operator's measured cases (a batch variant: its base case's cost), else its table's, else all of them; a converter
never measured costs the mean of the other converters' estimates; with no costs at all,
every case costs the same (a split by count). A case's units stay on one shard (they share
its oracle and artefacts).

The plan is longest-processing-time first: cases in decreasing cost (ties by id), each to
the shard with the least cost so far (ties to the lowest index). Costs are whole
milliseconds, so the sums, and the plan, are the same on every machine given the same
cases, converters and cost file.
"""
from __future__ import annotations

import hashlib
import heapq
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from pnnx_op_cases.batch_variants import base_id

from .errors import HarnessError

COSTS_FILE = Path(__file__).resolve().parents[2] / "reports" / "case_costs.json"
FORMAT = 1
UNMEASURED_MS = 1000  # every case alike when nothing at all was measured


# --- the cost file ---------------------------------------------------------------------
def read_costs(path: Path | None = None) -> dict[str, dict[str, float]]:
    """converter -> case id -> seconds; {} when there is no default file (a file named
    explicitly must exist)."""
    if path is None and not COSTS_FILE.is_file():
        return {}
    path = Path(path or COSTS_FILE)
    try:
        data = json.loads(path.read_text())
        converters, rows = data["converters"], data["cases"]
        if data.get("format") != FORMAT or not all(len(v) == len(converters) for v in rows.values()):
            raise ValueError("not a case cost file of format 1")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise HarnessError(f"{path}: unreadable case costs ({e})") from None
    costs: dict[str, dict[str, float]] = {c: {} for c in converters}
    for case, values in rows.items():
        for conv, seconds in zip(converters, values):
            if seconds is not None:
                costs[conv][case] = float(seconds)
    return costs


def write_costs(path: Path, costs: dict[str, dict[str, float]]) -> Path:
    """One line per case, sorted, so a refresh reads as a small diff."""
    converters = sorted(c for c in costs if costs[c])
    cases = sorted({case for c in converters for case in costs[c]})
    lines = [" " + json.dumps(case) + ": " + json.dumps([_rounded(costs[c].get(case)) for c in converters])
             for case in cases]
    head = (f'{{"format": {FORMAT},\n "what": "seconds of worker time per case and converter (the sum of its '
            f'records\' time_s), learnt by pnnx-conformance plan --learn; run --shard splits by them",\n'
            f' "converters": {json.dumps(converters)},\n "cases": {{\n')
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + ",\n".join(lines) + "\n}}\n")
    return path


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else max(0.01, round(seconds, 2))


def measured_costs(results: Iterable) -> dict[str, dict[str, float]]:
    """converter -> case -> the sum of the case's records' time_s."""
    costs: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in results:
        costs[r.converter][r.case] += r.time_s
    return {c: dict(v) for c, v in costs.items()}


def learn(old: dict, results: Iterable, known_ids: set[str]) -> dict[str, dict[str, float]]:
    """`old` with every (case, converter) measured in `results` replaced by the new
    measurement; cases that no longer exist are dropped."""
    merged = {c: dict(v) for c, v in old.items()}
    for conv, cases in measured_costs(results).items():
        merged.setdefault(conv, {}).update(cases)
    return {c: {k: s for k, s in v.items() if k in known_ids} for c, v in merged.items()}


# --- estimates -------------------------------------------------------------------------
class CostModel:
    """Milliseconds per case for a set of converters, measured or estimated."""

    def __init__(self, costs: dict[str, dict[str, float]], universe: Iterable) -> None:
        self.universe = {c.id: c for c in universe}
        self.ms = {conv: {k: round(s * 1000) for k, s in v.items() if k in self.universe}
                   for conv, v in costs.items()}
        self.ms = {conv: v for conv, v in self.ms.items() if v}
        self._medians = {conv: self._group_medians(v) for conv, v in self.ms.items()}

    def _group_medians(self, measured: dict[str, int]) -> dict:
        groups: dict[tuple, list[int]] = defaultdict(list)
        for case_id, ms in measured.items():
            case = self.universe[case_id]
            groups[("op", case.op)].append(ms)
            groups[("table", case.table)].append(ms)
            groups[("all",)].append(ms)
        return {k: round(statistics.median(v)) for k, v in groups.items()}

    def measured(self, case, converter: str) -> bool:
        return case.id in self.ms.get(converter, {})

    def estimate(self, case, converter: str) -> int:
        if converter in self.ms:
            for known in (case.id, base_id(case.id)):  # a batch variant costs what its base case did
                if known in self.ms[converter]:
                    return self.ms[converter][known]
            med = self._medians[converter]
            return med.get(("op", case.op), med.get(("table", case.table), med[("all",)]))
        if self.ms:  # a converter never measured: as the measured ones, on average
            return round(statistics.mean(self.estimate(case, c) for c in sorted(self.ms)))
        return UNMEASURED_MS

    def case_ms(self, case, converters: list[str]) -> int:
        return sum(self.estimate(case, c) for c in converters)


# --- the plan --------------------------------------------------------------------------
@dataclass
class Shard:
    index: int                 # 1-based
    cases: list                # Case objects, sorted by id
    predicted_ms: int
    estimated: int             # how many of its (case, converter) costs are estimates

    @property
    def predicted_s(self) -> float:
        return self.predicted_ms / 1000


def plan_shards(cases: list, n: int, converters: list[str], model: CostModel) -> list[Shard]:
    costed = sorted(((model.case_ms(c, converters), c.id, c) for c in cases), key=lambda t: (-t[0], t[1]))
    heap = [(0, i) for i in range(n)]
    members: list[list] = [[] for _ in range(n)]
    for ms, _, case in costed:
        load, i = heapq.heappop(heap)
        members[i].append(case)
        heapq.heappush(heap, (load + ms, i))
    loads = dict((i, load) for load, i in heap)
    return [Shard(i + 1, sorted(members[i], key=lambda c: c.id), loads[i],
                  sum(not model.measured(c, conv) for c in members[i] for conv in converters))
            for i in range(n)]


def costly_first(cases: list, converters: list[str], costs_path: Path | None = None) -> list:
    """The order a run hands cases to its workers: the costliest first (ties by id), so no
    long case starts last while the other workers sit idle."""
    model = model_for(costs_path)
    return sorted(cases, key=lambda c: (-model.case_ms(c, converters), c.id))


def plan_digest(shards: list[Shard]) -> str:
    """Names the whole assignment: shards of one plan carry the same digest."""
    h = hashlib.sha256()
    for s in shards:
        h.update(f"{s.index}:{','.join(c.id for c in s.cases)}\n".encode())
    return h.hexdigest()[:16]


def model_for(costs_path: Path | None) -> CostModel:
    from .cases import all_cases

    return CostModel(read_costs(costs_path), all_cases())


def shard_of(cases: list, shard: tuple[int, int], converters: list[str],
             costs_path: Path | None = None) -> tuple[list, dict]:
    """The K-th shard's cases, and what run.json records about the plan."""
    k, n = shard
    shards = plan_shards(cases, n, converters, model_for(costs_path))
    mine = shards[k - 1]
    return mine.cases, {"plan": plan_digest(shards), "planned_cases": len(cases),
                        "predicted_worker_s": round(mine.predicted_s, 1)}


def plan_text(shards: list[Shard], jobs: int) -> str:
    total = sum(s.predicted_ms for s in shards) / 1000
    mean = total / len(shards)
    rows = [f"{'shard':>7} {'cases':>6} {'predicted_s':>12} {'at -j' + str(jobs):>9} {'/mean':>6} {'estimated':>9}"]
    for s in shards:
        rows.append(f"{s.index:>4}/{len(shards):<2} {len(s.cases):>6} {s.predicted_s:>12.1f} "
                    f"{s.predicted_s / jobs:>9.1f} {s.predicted_s / mean if mean else 1:>6.3f} {s.estimated:>9}")
    worst = max(s.predicted_ms for s in shards) / 1000
    rows.append(f"total {total:.1f} s of worker time ({total / jobs:.1f} s on one machine at -j {jobs}); "
                f"mean {mean:.1f} s per shard, longest {worst:.1f} s = {worst / mean if mean else 1:.3f} x the mean")
    return "\n".join(rows)
