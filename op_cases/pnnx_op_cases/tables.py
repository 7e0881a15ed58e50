"""The supported-operator tables as data: one row per operator, with upstream's marks.

`tables/*.tsv` start as copies of the upstream lists; rows whose `listed_in` is `ours`
are everyday operators that upstream does not list and this project adds.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

TABLES = ("nn", "F", "Tensor", "torch", "onnx", "torchvision")


@dataclass(frozen=True)
class OpRow:
    op: str
    table: str
    upstream_supported: bool
    upstream_ncnn: str          # "1", "0" or "star" (partial)
    listed_in: str              # upstream-readme | seed-readme | upstream-tests | ours
    upstream_test: bool = False
    upstream_ncnn_test: bool = False
    upstream_onnx_test: bool = False

    @property
    def ours(self) -> bool:
        return self.listed_in == "ours"


@lru_cache(maxsize=None)
def load_table(table: str) -> tuple[OpRow, ...]:
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}; choose from {', '.join(TABLES)}")
    text = resources.files(__package__).joinpath("tables", f"{table}.tsv").read_text()
    rows = []
    for rec in csv.DictReader(text.splitlines(), delimiter="\t"):
        rows.append(OpRow(
            op=rec["op"], table=table,
            upstream_supported=rec["upstream_supported"] == "1",
            upstream_ncnn=rec["upstream_export_to_ncnn"],
            listed_in=rec["listed_in"],
            upstream_test=rec.get("upstream_test") == "1",
            upstream_ncnn_test=rec.get("upstream_ncnn_test") == "1",
            upstream_onnx_test=rec.get("upstream_onnx_test") == "1",
        ))
    return tuple(rows)


def all_rows() -> tuple[OpRow, ...]:
    return tuple(r for t in TABLES for r in load_table(t))


def row(op: str) -> OpRow:
    for r in all_rows():
        if r.op == op:
            return r
    raise KeyError(op)
