"""`pnnx-conformance behind`: the records a route does not pass where its base does, check by
check and backend by backend; known gaps carry a reason, and the command is strict both ways."""
from __future__ import annotations

import subprocess
import sys

import pytest

from pnnx_conformance.errors import HarnessError
from pnnx_conformance.report.behind import behind, load_known
from pnnx_conformance.results import Result


def _r(converter, case, status, backend="ncnn-cpu", error=""):
    return Result(case=case, op=case.split("/")[0], table="nn", converter=converter, check="parity",
                  status=status, backend=backend, precision="fp32", error=error)


RESULTS = [
    _r("upstream", "nn.A/x", "pass"), _r("reference-pt", "nn.A/x", "pass"),
    _r("upstream", "nn.B/x", "pass"), _r("reference-pt", "nn.B/x", "not-supported", error="unsupported: no rule"),
    _r("upstream", "nn.C/x", "fail-numeric"), _r("reference-pt", "nn.C/x", "fail-convert"),
    _r("upstream", "nn.D/x", "pass"), _r("reference-pt", "nn.D/x", "not-applicable"),
    _r("upstream", "nn.E/x", "pass", backend="torch"), _r("reference-pt", "nn.E/x", "pass"),  # torch: not planned
    _r("upstream", "nn.F/x", "pass"),  # a case the route did not run
]


def test_a_gap_is_a_record_the_base_passes_and_the_route_does_not():
    found = behind(RESULTS, "reference-pt", "upstream")
    assert [(b.case, r.status) for b, r, _ in found.gaps] == [("nn.B/x", "not-supported")]
    assert found.unexplained and not found.stale and found.unplanned == 1


def test_known_gaps_explain_and_go_stale(tmp_path):
    known = tmp_path / "behind.toml"
    known.write_text('[[gap]]\nroute = "reference-pt"\nbase = "upstream"\ncase = "nn.B/*"\nerror = "unsupported:*"\n'
                     'reason = "no rule yet"\n\n[[gap]]\nroute = "reference-pt"\nbase = "upstream"\ncase = "nn.A/*"\n'
                     'reason = "it used to fail"\n')
    found = behind(RESULTS, "reference-pt", "upstream", load_known(known))
    assert not found.unexplained
    assert [g.case for g in found.stale] == ["nn.A/*"]
    # a kind of failure (an error pattern) is not stale on results that do not show it
    assert not behind(RESULTS[:2], "reference-pt", "upstream", load_known(known)[:1]).stale


def test_a_waived_record_is_a_gap_its_waiver_explains():
    waived = _r("reference-pt", "nn.B/x", "xfail")
    waived.waiver = "tracing renormalised the rows"
    found = behind([RESULTS[2], waived], "reference-pt", "upstream")
    assert len(found.gaps) == 1 and not found.unexplained


def test_a_known_gap_without_a_reason_is_refused(tmp_path):
    known = tmp_path / "behind.toml"
    known.write_text('[[gap]]\nroute = "reference-pt"\nbase = "upstream"\ncase = "nn.B/*"\n')
    with pytest.raises(HarnessError, match="gap 1: missing reason"):
        load_known(known)


def test_the_command_is_strict(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text("".join(r.to_json() + "\n" for r in RESULTS))
    empty = tmp_path / "none.toml"
    empty.write_text("")
    cmd = [sys.executable, "-m", "pnnx_conformance.cli", "behind", str(results), "--route", "reference-pt",
           "--known", str(empty)]
    loose = subprocess.run(cmd, capture_output=True, text=True)
    strict = subprocess.run(cmd + ["--strict"], capture_output=True, text=True)
    assert loose.returncode == 0 and strict.returncode == 1
    assert "NEW   nn.B/x [parity ncnn-cpu fp32]: not-supported: unsupported: no rule" in strict.stdout
    assert "falls behind upstream on 1 records (1 cases)" in strict.stdout


@pytest.mark.parametrize("route, base", [("reference-pt", "upstream"), ("reference", "upstream"),
                                         ("reference-onnx", "reference"), ("reference-export", "reference")])
def test_the_published_results_show_no_unexplained_gap(route, base):
    """The committed results (reports/results.jsonl.gz): our routes pass every record upstream's
    converter passes, the ONNX and .pt2 routes every record the Python route passes, or the gap is listed
    in conformance/behind.toml with its reason."""
    from pathlib import Path

    from pnnx_conformance.report.behind import DEFAULT_FILE
    from pnnx_conformance.report.committed import load_any

    root = Path(__file__).resolve().parents[2]
    found = behind(load_any(root / "reports" / "results.jsonl.gz"), route, base, load_known(DEFAULT_FILE))
    assert not found.unexplained and not found.stale, "\n".join(found.lines()[-20:])
