"""The case registry: every family module joins with `@family("op.Name", ...)`.

A family is a function yielding `Case`s for the table rows it names. The names are string
literals, so `grep -rn '"nn.Conv2d"' op_cases` finds every family of a row (a unit test
holds every module to that). `all_cases()` imports every module under `families/`, runs the
families and returns the cases sorted by id; a family yielding a row it did not name, or
naming a row it yields nothing for, is an error.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Callable, Iterable

from .case import Case

_FAMILIES: dict[str, list[Callable[[], Iterable[Case]]]] = {}


def family(*ops: str):
    """Register a generator of cases for one or more table rows."""

    def register(fn: Callable[[], Iterable[Case]]):
        for op in ops:
            _FAMILIES.setdefault(op, []).append(fn)
        return fn

    return register


def _import_families() -> None:
    from . import families

    for mod in pkgutil.iter_modules(families.__path__):
        importlib.import_module(f"{families.__name__}.{mod.name}")


@lru_cache(maxsize=None)
def all_cases() -> tuple[Case, ...]:
    _import_families()
    cases: dict[str, Case] = {}
    for fn, ops in _families_with_ops().items():
        yielded = set()
        for case in fn():
            if case.id in cases:
                raise ValueError(f"duplicate case id {case.id}")
            if case.op not in ops:
                raise ValueError(f"{fn.__module__}.{fn.__name__} registered for {sorted(ops)} "
                                 f"but yields {case.id}")
            cases[case.id] = case
            yielded.add(case.op)
        if ops - yielded:
            raise ValueError(f"{fn.__module__}.{fn.__name__} registered for {sorted(ops - yielded)} "
                             "but yields no case of them")
    return tuple(sorted(cases.values(), key=lambda c: c.id))


def families(op: str) -> list[Callable[[], Iterable[Case]]]:
    """The family functions registered for table row `op` (empty for an unknown row)."""
    _import_families()
    return list(_FAMILIES.get(op, ()))


def registered_ops() -> set[str]:
    _import_families()
    return set(_FAMILIES)


def _families_with_ops() -> dict[Callable, set[str]]:
    """Each family function once, with every row it registered for."""
    out: dict[Callable, set[str]] = {}
    for op, fns in _FAMILIES.items():
        for fn in fns:
            out.setdefault(fn, set()).add(op)
    return out


@lru_cache(maxsize=None)
def _by_id() -> dict[str, Case]:
    return {case.id: case for case in all_cases()}


def get_case(case_id: str) -> Case:
    try:
        return _by_id()[case_id]
    except KeyError:
        raise KeyError(f"no case {case_id!r}") from None


def select(*, op: str | None = None, table: str | None = None, tier: str | None = None,
           tag: str | None = None, pattern: str | None = None) -> list[Case]:
    """Filter cases. tier='smoke' keeps smoke cases; tier='full' keeps all."""
    import fnmatch

    out = []
    for case in all_cases():
        if op and case.op != op:
            continue
        if table and case.table != table:
            continue
        if tier == "smoke" and case.tier != "smoke":
            continue
        if tag and tag not in case.tags:
            continue
        if pattern and not fnmatch.fnmatchcase(case.id, pattern):
            continue
        out.append(case)
    return out
