"""pnnx.param text compared across conversion doors (the agreement tests of the `.pt` and
`.pt2` doors against the Python-API door)."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from pnnx_op_cases.batch_variants import base_id
from pnnx_reference.formats import pnnx_param

_NAMES = re.compile(r"^(\S+)\s+\S+\s+")


def normalised_param(graph) -> list[str]:
    """The pnnx.param text with the operator-name column dropped (operands are already
    renumbered by canonicalisation)."""
    text = pnnx_param.dumps(graph)
    text = text[0] if isinstance(text, tuple) else text
    return [_NAMES.sub(r"\1 ", line) for line in text.splitlines()[2:]]


def known_cases(path) -> dict[str, str]:
    """A known-differences table (case <TAB> category, `#` comments) as {case id: category}."""
    rows = (line for line in Path(path).read_text().splitlines() if line and not line.startswith("#"))
    return {r["case"]: r["category"] for r in csv.DictReader(rows, delimiter="\t")}


def expect_known(request, case_id: str, known: dict[str, str], reasons: dict[str, str]) -> None:
    """Mark a listed case (or the base case of its batch variant, which differs as its base
    does) a strict xfail with its category's reason."""
    category = known.get(case_id, known.get(base_id(case_id)))
    if category is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reasons[category]))


def assert_doors_agree(python_lines: list[str], other_lines: list[str], door: str) -> None:
    diff = [(a, b) for a, b in zip(python_lines, other_lines) if a != b]
    assert python_lines == other_lines, (
        f"first difference (python | {door}):\n  {diff[0][0] if diff else len(python_lines)}\n"
        f"  {diff[0][1] if diff else len(other_lines)}")
