"""Where cases come from: a provider, "module:function" returning every Case.

The default is the project's registry; tests and vendors may point the harness at their
own provider. The worker processes receive the same provider spec.
"""
from __future__ import annotations

import fnmatch
import importlib
import zlib
from functools import lru_cache

from .errors import HarnessError

DEFAULT_PROVIDER = "pnnx_op_cases.registry:all_cases"
_state = {"provider": DEFAULT_PROVIDER}


def use_provider(spec: str | None) -> None:
    _state["provider"] = spec or DEFAULT_PROVIDER
    _cases.cache_clear()


def provider() -> str:
    return _state["provider"]


@lru_cache(maxsize=4)
def _cases(spec: str) -> dict:
    mod, _, attr = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError) as e:
        raise HarnessError(f"cannot load the case provider {spec!r}: {e}") from None
    return {c.id: c for c in sorted(fn(), key=lambda c: c.id)}


def all_cases() -> list:
    return list(_cases(provider()).values())


def load_case(case_id: str):
    try:
        return _cases(provider())[case_id]
    except KeyError:
        raise HarnessError(f"no case {case_id!r} in {provider()}") from None


def budget_subset(cases: list, limit: int) -> list:
    """At most `limit` cases, the same ones on every run: tables take turns, and within a
    table cases go in crc32(id) order (stable when cases are added elsewhere)."""
    if limit <= 0 or len(cases) <= limit:
        return cases
    by_table: dict[str, list] = {}
    for case in sorted(cases, key=lambda c: zlib.crc32(c.id.encode())):
        by_table.setdefault(case.table, []).append(case)
    queues = [by_table[t] for t in sorted(by_table)]
    chosen = []
    while len(chosen) < limit:
        for q in queues:
            if q and len(chosen) < limit:
                chosen.append(q.pop(0))
    return sorted(chosen, key=lambda c: c.id)


def select_cases(tier: str = "smoke", op: list[str] | None = None, table: list[str] | None = None,
                 pattern: str | None = None, limit: int = 0, *, ids=None) -> list:
    """The cases of a tier (smoke: smoke-tagged ones; full: all), filtered, sorted by id,
    then thinned to `limit` cases (0: no limit) by budget_subset. `ids`: only these."""
    out = []
    wanted = set(ids) if ids else None
    for case in all_cases():
        if wanted is not None and case.id not in wanted:
            continue
        if tier == "smoke" and case.tier != "smoke":
            continue
        if op and not any(fnmatch.fnmatchcase(case.op, p) for p in op):
            continue
        if table and case.table not in table:
            continue
        if pattern and not fnmatch.fnmatchcase(case.id, pattern):
            continue
        out.append(case)
    return budget_subset(out, limit)
