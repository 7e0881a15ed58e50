"""The committed reports are what their committed results produce (issue 8, item 5): the
main run's `reports/` and every device run published beside it (e.g. `reports/nvidia-h100/`)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pnnx_conformance.certify import verify_file
from pnnx_conformance.report.committed import COMPACT, check_matrix, check_readme, read_compact
from pnnx_conformance.report.readme import README_BEGIN, README_END, readme_section
from pnnx_conformance.report.summary import summarize

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
README = ROOT / "README.md"
# README.md stays readable on a phone: under 30 KB with every operator row. Its generated
# section (two routes today: about 17 KB) has 22 KB; the three routes coming (.pt, .pt2, ONNX)
# add about 2.4 KB each when they pass as the Python route does (the projection below).
README_BYTES = 30_000
SECTION_BYTES = 22_000
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


def test_committed_readme_section_matches_committed_results():
    diff = check_readme(README, REPORTS)
    assert diff == "", "README.md's support section is stale; regenerate it with `pnnx-conformance report " \
                       "--results reports/results.jsonl.gz --out reports --readme README.md`:\n" + diff[:4000]


def test_readme_stays_small_with_every_row():
    text = README.read_text()
    section = text.split(README_BEGIN, 1)[1].split(README_END, 1)[0]
    assert len(text.encode()) < README_BYTES, f"README.md is {len(text.encode())} bytes"
    assert len(section.encode()) < SECTION_BYTES, f"its generated section is {len(section.encode())} bytes"


def test_readme_with_five_routes_stays_under_budget():
    """Projection: the three coming reference routes, each passing what the Python route passes."""
    results = read_compact(REPORTS / COMPACT)
    routes = ("reference-pt", "reference-export", "reference-onnx")
    five = results + [replace(r, converter=c) for c in routes for r in results if r.converter == "reference"]
    section = readme_section(summarize(five))
    head = README.read_text().split(README_BEGIN, 1)[0]
    assert len((head + section).encode()) < README_BYTES, f"{len((head + section).encode())} bytes"
