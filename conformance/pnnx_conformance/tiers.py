"""Tiers and their floors: a run executing fewer cases than its floor is an error, so a
broken case generator or filter can never yield a green run of nothing."""
from __future__ import annotations

TIERS = ("smoke", "full")
FLOORS = {"smoke": 40, "full": 300}
NOT_EXECUTED = {"skipped"}


def floor_for(tier: str, shards: int = 1, filtered: bool = False) -> int:
    if filtered:
        return 1
    # shards split by hash, so a shard can be well below the mean
    return max(1, FLOORS[tier] // (2 * shards)) if shards > 1 else FLOORS[tier]


def executed_cases(results) -> set[str]:
    return {r.case for r in results if r.status not in NOT_EXECUTED}
