"""Aggregate result records into per-operator, per-column cells.

A column is one (converter, check/backend, precision) combination; a cell counts the
cases of one operator in that column that pass. Everything here is pure data: the
markdown matrix and the HTML report both render from `Summary`.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..results import Result, read_results

GOOD = {"pass"}
WAIVED = {"xfail"}
NOT_APPLICABLE = {"not-applicable"}


@dataclass(frozen=True, order=True)
class Column:
    converter: str
    check: str
    backend: str = ""
    precision: str = ""

    @property
    def label(self) -> str:
        if self.check == "parity":
            what = self.backend + (f" {self.precision}" if self.precision else "")
        else:
            what = self.check
        return f"{self.converter}: {what}"


@dataclass
class Cell:
    passed: int = 0
    waived: int = 0
    total: int = 0
    statuses: Counter = field(default_factory=Counter)
    not_applicable: int = 0   # records of checks that mean nothing here (not in `total`)

    @property
    def state(self) -> str:
        if self.total == 0:
            return "n/a" if self.not_applicable else "none"
        if self.passed == self.total:
            return "pass"
        if self.passed + self.waived == self.total:
            return "waived"
        return "partial" if self.passed else "fail"

    def text(self) -> str:
        return f"{self.passed}/{self.total}" if self.total else "—"


def column_of(r: Result) -> Column:
    if r.check == "parity":
        return Column(r.converter, "parity", r.backend or "", r.precision or "")
    return Column(r.converter, r.check)


CHECK_ORDER = {"convert": 0, "format": 1, "roundtrip": 2, "reexport": 3, "parity": 4}
BACKEND_ORDER = {"torch": 0, "pnnx-python": 1, "onnxruntime": 2, "ncnn-cpu": 3, "ncnn-vulkan": 4}


# the reference converter's routes (Python API, TorchScript .pt, torch.export .pt2, ONNX file)
# first, any other converter next, the upstream `pnnx` it is measured against last
ROUTE_ORDER = ("reference", "reference-pt", "reference-export", "reference-onnx")


def converter_order(name: str):
    if name in ROUTE_ORDER:
        return (0, ROUTE_ORDER.index(name), name)
    if name.startswith("reference"):
        return (1, 0, name)
    return (3 if name == "upstream" else 2, 0, name)


def mode_key(c: Column):
    """A column's place among one converter's columns: checks first, then the backends."""
    return (CHECK_ORDER.get(c.check, 9), c.check, BACKEND_ORDER.get(c.backend, 9), c.backend, c.precision)


def column_sort_key(c: Column):
    return (converter_order(c.converter),) + mode_key(c)


@dataclass
class Summary:
    results: list[Result]
    columns: list[Column]
    cells: dict[tuple[str, Column], Cell]          # (op, column) -> cell
    by_op: dict[str, list[Result]]

    def cell(self, op: str, column: Column) -> Cell:
        return self.cells.get((op, column), Cell())

    def column_totals(self, table: str | None = None) -> dict[Column, Cell]:
        totals: dict[Column, Cell] = defaultdict(Cell)
        table_of = {op: rs[0].table for op, rs in self.by_op.items()}
        for (op, col), cell in self.cells.items():
            if table and table_of.get(op) != table:
                continue
            t = totals[col]
            t.passed += cell.passed
            t.waived += cell.waived
            t.total += cell.total
            t.not_applicable += cell.not_applicable
            t.statuses.update(cell.statuses)
        return totals


def summarize(results: Iterable[Result]) -> Summary:
    results = sorted(results, key=lambda r: r.key)
    cells: dict[tuple[str, Column], Cell] = defaultdict(Cell)
    by_op: dict[str, list[Result]] = defaultdict(list)
    columns = set()
    for r in results:
        col = column_of(r)
        columns.add(col)
        cell = cells[(r.op, col)]
        cell.statuses[r.status] += 1
        if r.status in NOT_APPLICABLE:
            cell.not_applicable += 1
            by_op[r.op].append(r)
            continue
        cell.total += 1
        if r.status in GOOD:
            cell.passed += 1
        elif r.status in WAIVED:
            cell.waived += 1
        by_op[r.op].append(r)
    return Summary(results, sorted(columns, key=column_sort_key), dict(cells), dict(by_op))


def load_results(results_dir: Path) -> list[Result]:
    """Every `*.jsonl` result file under `results_dir` (shards included), de-duplicated by key."""
    merged: dict[tuple, Result] = {}
    for path in sorted(Path(results_dir).glob("**/*.jsonl")):
        for r in read_results(path):
            merged[r.key] = r
    return list(merged.values())


def error_histogram(results: Iterable[Result], limit: int = 30) -> list[tuple[str, int, list[str]]]:
    """The most common failure messages: (message, count, example case ids)."""
    counts: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for r in results:
        if r.status in GOOD or r.status in ("skipped", "xfail") or not r.error:
            continue
        msg = normalize_error(r.error)
        counts[msg] += 1
        if len(examples[msg]) < 3:
            examples[msg].append(r.case)
    return [(m, n, examples[m]) for m, n in counts.most_common(limit)]


def normalize_error(message: str) -> str:
    """Group messages that differ only in numbers or paths."""
    import re

    line = message.strip().splitlines()[0] if message.strip() else ""
    line = re.sub(r"/[^\s:]+", "<path>", line)
    line = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", line)
    return line[:200]
