"""The committed reports are what their committed results produce (issue 8, item 5): the
main run's `reports/` and every device run published beside it (e.g. `reports/nvidia-h100/`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pnnx_conformance.report.certify import verify_file
from pnnx_conformance.report.committed import COMPACT, check_matrix

REPORTS = Path(__file__).resolve().parents[2] / "reports"
REPORT_DIRS = sorted(p.parent for p in REPORTS.rglob(COMPACT))
CERTIFICATES = sorted(REPORTS.rglob("certificate-*.json"))


def test_the_main_report_is_committed():
    assert (REPORTS / COMPACT).is_file(), "reports/results.jsonl.gz is missing"


@pytest.mark.parametrize("folder", REPORT_DIRS, ids=lambda p: str(p.relative_to(REPORTS)) or ".")
def test_committed_matrix_matches_committed_results(folder):
    diff = check_matrix(folder)
    assert diff == "", f"{folder}/support_matrix.md is stale; regenerate it with " \
                       f"`pnnx-conformance report --results <run> --out {folder.relative_to(REPORTS.parent)}`:\n" \
                       + diff[:4000]


@pytest.mark.parametrize("path", CERTIFICATES, ids=lambda p: str(p.relative_to(REPORTS)))
def test_committed_certificates_verify(path):
    """The digest still covers the certificate's content and its pass rates and waivers agree
    with its per-case results. The case set is not re-checked: a certificate certifies the cases
    of its day (its case-set hash records which). The committed ones predate signing (format 1):
    their digest is all they carry, hence allow_unsigned."""
    assert verify_file(path, check_cases=False, allow_unsigned=True) == []
