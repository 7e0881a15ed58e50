"""`certify` on a valid run never crashes and writes its JSON and HTML together; by default it
covers every case of the tier (no budget subset), takes run's selectors and ends with one
line per precision mode (issue 28, item 4). Runs are faked by results folders (`--results`)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from certificates import rec

from pnnx_conformance import tiers
from pnnx_conformance.cli import main
from pnnx_conformance import certify as certify_module
from pnnx_conformance.report import certificate_html
from pnnx_conformance.results import write_results

HARNESS = Path(__file__).resolve().parents[1] / "harness"
PROVIDER = "harness_cases:cases"
BACKEND = "harness_fake_backends:WrongBackend"   # named "wrong"; never run here


@pytest.fixture(autouse=True)
def harness_path(monkeypatch):
    monkeypatch.syspath_prepend(str(HARNESS))


def results_dir(tmp_path, records, tier="smoke") -> Path:
    for r in records:
        r.tier = tier
    write_results(tmp_path / "run" / "results.jsonl", records)
    return tmp_path / "run"


def certify(tmp_path, capsys, *args):
    rc = main(["certify", "--backend", BACKEND, "--cases", PROVIDER, "--out", str(tmp_path / "cert"), *args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


def test_a_table_without_passes_still_gives_json_html_and_summary(tmp_path, capsys):
    run = results_dir(tmp_path, [rec("nn.Conv2d/k3_p1", "crash", backend="wrong", error="SIGSEGV"),
                                 rec("F.relu/r4", "fail-numeric", backend="wrong"),
                                 rec("torch.add/batch2", "pass", backend="wrong")])
    rc, err = certify(tmp_path, capsys, "--results", str(run))
    assert rc == 0, err
    js, page = tmp_path / "cert" / "certificate-wrong.json", tmp_path / "cert" / "certificate-wrong.html"
    cert = json.loads(js.read_text())
    assert cert["summary"]["fp32"]["tables"]["nn"]["passed"] == 0 and "crash" in page.read_text()
    assert "wrong fp32 (fp32): 1/3 cases passed (33.3%), 0 waived, 2 failed, 0 not applicable" in err


def test_not_applicable_cases_are_outside_the_rate_and_listed_apart(tmp_path, capsys):
    run = results_dir(tmp_path, [rec("F.relu/r4", "pass", backend="wrong"),
                                 rec("F.dropout/train", "skipped", backend="wrong", error="random output")],
                      tier="full")
    rc, err = certify(tmp_path, capsys, "--results", str(run), "--tier", "full", "--op", "F.*")
    assert rc == 0 and "1/1 cases passed (100.0%), 0 waived, 0 failed, 1 not applicable" in err
    page = (tmp_path / "cert" / "certificate-wrong.html").read_text()
    assert "<li>F.dropout/train: random output</li>" in page
    assert "<tr><td><b>operators</b></td><td>F.*</td></tr>" in page   # the filter is shown


def test_nothing_is_written_when_the_page_cannot_be_rendered(tmp_path, capsys, monkeypatch):
    run = results_dir(tmp_path, [rec(c, "pass", backend="wrong") for c in ("nn.Conv2d/k3_p1", "F.relu/r4",
                                                                            "torch.add/batch2")])

    def broken(cert):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(certificate_html, "certificate_html", broken)
    rc, err = certify(tmp_path, capsys, "--results", str(run))
    assert rc == 2 and "No space left on device" in err
    assert not (tmp_path / "cert").exists() or not list((tmp_path / "cert").iterdir())


def test_the_default_selection_is_every_case_of_the_tier_and_run_s_selectors_apply(tmp_path, monkeypatch):
    """No budget subset (the smoke tier's 48 of a plain run): every smoke case; --table and
    --pattern select as run's do."""
    seen = []

    def fake_run(backend, out, selection, waivers, jobs, progress):
        seen.append(selection)
        return [rec(c, "pass", backend="wrong") for c in ("nn.Conv2d/k3_p1", "F.relu/r4", "torch.add/batch2")
                if c.split(".")[0] in (selection["tables"] or ["nn", "F", "torch"])]

    monkeypatch.setattr(certify_module, "_run", fake_run)
    monkeypatch.setitem(tiers.MAX_CASES, "smoke", 1)
    cert = certify_module.certify(BACKEND, tmp_path / "a", cases_provider=PROVIDER)[0]
    assert cert["selection"]["case_count"] == 3 and seen[-1]["max_cases"] is None
    cert = certify_module.certify(BACKEND, tmp_path / "b", cases_provider=PROVIDER, tables=["nn"],
                                  pattern="nn.Conv2d/*")[0]
    assert (cert["selection"]["tables"], cert["selection"]["pattern"], cert["selection"]["case_count"]) == \
        (["nn"], "nn.Conv2d/*", 1)


def test_a_plugin_whose_describe_fails_is_refused_in_one_line_before_anything_runs(tmp_path, capsys, monkeypatch):
    import harness_fake_backends

    monkeypatch.setattr(harness_fake_backends.WrongBackend, "describe", lambda self: 1 / 0)
    rc, err = certify(tmp_path, capsys)
    assert rc == 2 and err == "error: backend 'wrong': describe() failed: ZeroDivisionError: division by zero\n"
    assert not (tmp_path / "cert").exists()


def test_records_that_would_not_verify_are_not_certified(tmp_path, capsys):
    """A case without a record in some precision mode: refused, nothing written."""
    run = results_dir(tmp_path, [rec("F.relu/r4", "pass", backend="default-mode"),
                                 rec("F.relu/r4", "pass", precision="default", backend="default-mode"),
                                 rec("nn.Conv2d/k3_p1", "pass", backend="default-mode")])
    rc = main(["certify", "--backend", "harness_fake_backends:DefaultModeBackend", "--cases", PROVIDER,
               "--op", "F.relu,nn.Conv2d", "--results", str(run), "--out", str(tmp_path / "cert")])
    err = capsys.readouterr().err
    assert rc == 2 and "1 case(s) lack a result in some declared precision mode, e.g. nn.Conv2d/k3_p1" in err
    assert not (tmp_path / "cert").exists()
