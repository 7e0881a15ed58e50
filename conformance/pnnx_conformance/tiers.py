"""Tiers and their floors: a run executing fewer cases than its floor is an error, so a
broken case generator or filter can never yield a green run of nothing."""
from __future__ import annotations

TIERS = ("smoke", "full")
FLOORS = {"smoke": 40, "full": 300}
# The default tier must finish well inside 10 minutes on a 2-core machine; every smoke case
# through both converters and five backends does not, so an unfiltered smoke run takes this
# many of the smoke-tagged cases (cases.budget_subset: deterministic, every table). 0: all.
MAX_CASES = {"smoke": 48, "full": 0}


def case_limit(tier: str, max_cases: int | None, filtered: bool) -> int:
    if max_cases is not None:
        return max_cases
    return 0 if filtered else MAX_CASES[tier]
NOT_EXECUTED = {"skipped"}


def floor_for(tier: str, shards: int = 1, filtered: bool = False, limit: int = 0) -> int:
    if filtered:
        return 1
    if limit:
        return max(1, min(FLOORS[tier], limit) // (2 * shards if shards > 1 else 1))
    # shards are balanced by cost, not count, so a shard of costly cases holds fewer than the mean
    return max(1, FLOORS[tier] // (2 * shards)) if shards > 1 else FLOORS[tier]


def executed_cases(results) -> set[str]:
    return {r.case for r in results if r.status not in NOT_EXECUTED}
