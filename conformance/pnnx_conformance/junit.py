"""JUnit XML for CI systems: one testsuite per converter x backend, one testcase per record."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

FAILURE = {"fail-numeric", "fail-format", "fail-convert", "fail-runtime"}
ERROR = {"crash", "timeout", "oom", "xpass", "harness-error"}
SKIP = {"skipped", "not-supported", "xfail", "not-applicable"}


def test_name(r) -> str:
    return "::".join(p for p in (r.case, r.check, r.backend, r.precision) if p)


def write_junit(path: Path, results) -> None:
    suites = defaultdict(list)
    for r in sorted(results, key=lambda r: r.key):
        suites[f"{r.converter}.{r.backend or r.check}"].append(r)
    root = ET.Element("testsuites", name="pnnx-conformance")
    for name, records in sorted(suites.items()):
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(records)),
                              failures=str(sum(r.status in FAILURE for r in records)),
                              errors=str(sum(r.status in ERROR for r in records)),
                              skipped=str(sum(r.status in SKIP for r in records)),
                              time=f"{sum(r.time_s for r in records):.3f}")
        for r in records:
            case = ET.SubElement(suite, "testcase", classname=f"{r.converter}.{r.op}", name=test_name(r),
                                 time=f"{r.time_s:.3f}")
            message = f"{r.status}: {r.error or r.waiver}"
            if r.status in FAILURE:
                ET.SubElement(case, "failure", type=r.status, message=message).text = r.detail
            elif r.status in ERROR:
                ET.SubElement(case, "error", type=r.status, message=message).text = r.detail
            elif r.status in SKIP:
                ET.SubElement(case, "skipped", message=message)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)
