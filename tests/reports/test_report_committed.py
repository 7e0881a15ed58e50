"""The committed support matrix is what the committed results produce (issue 8, item 5)."""
from __future__ import annotations

from pathlib import Path

from pnnx_conformance.report.committed import check_matrix

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def test_committed_matrix_matches_committed_results():
    assert (REPORTS / "results.jsonl.gz").is_file(), "reports/results.jsonl.gz is missing"
    diff = check_matrix(REPORTS)
    assert diff == "", "reports/support_matrix.md is stale; regenerate it with " \
                       "`pnnx-conformance report --results <run> --out reports --readme README.md`:\n" + diff[:4000]
