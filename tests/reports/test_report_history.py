"""The trend across runs (issue 15): each report files its run's totals in REPORTS/history.json
(one entry per commit and tier), and the HTML report draws them."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pnnx_conformance.cli import main
from pnnx_conformance.report import build_reports
from pnnx_conformance.report.committed import COMPACT, write_compact
from pnnx_conformance.report.history import HISTORY, KEEP, add_entry, read_history
from pnnx_conformance.results import Result, write_results
from pnnx_conformance.runinfo import run_info, write_run_info

from test_report_matrix import chromium, render_dom


def rec(case, status, check="parity", backend="ncnn-cpu", converter="reference", tier="smoke"):
    op = case.split("/")[0]
    return Result(case=case, op=op, table=op.split(".")[0], converter=converter, check=check, status=status,
                  backend=backend if check == "parity" else None, precision="fp32" if check == "parity" else None,
                  tier=tier)


RESULTS = [rec("nn.ReLU/a", "pass"), rec("nn.ReLU/a", "pass", check="convert"),
           rec("nn.Conv2d/k5", "fail-numeric"), rec("nn.Conv2d/k5", "pass", check="convert")]


def run_folder(folder: Path, results, commit: str | None, finished: str = "2026-11-01T10:00:00Z") -> Path:
    write_results(folder / "results.jsonl", results)
    if commit is not None:
        info = run_info("conformance", results[0].tier, ["reference"], 2, 1, 1.0, commit=commit)
        write_run_info(folder, {**info, "finished_utc": finished})
    return folder


def entry(commit, date, tier="smoke", passed=1):
    return {"commit": commit, "date": date, "tier": tier, "totals": {"reference": {"convert": [passed, 2]}}}


def test_an_entry_replaces_the_same_commit_and_tier_and_the_newest_are_kept():
    entries = add_entry([], entry("a", "2026-01-02"))
    entries = add_entry(entries, entry("a", "2026-01-02", passed=2))           # same run, reported again
    assert len(entries) == 1 and entries[0]["totals"]["reference"]["convert"] == [2, 2]
    entries = add_entry(entries, entry("a", "2026-01-02", tier="full"))         # same commit, other tier
    entries = add_entry(entries, entry("b", "2026-01-01"))                      # older: sorted first
    assert [(e["commit"], e["tier"]) for e in entries] == [("b", "smoke"), ("a", "smoke"), ("a", "full")]
    for i in range(KEEP + 5):
        entries = add_entry(entries, entry(f"c{i:03d}", f"2026-02-01T00:{i // 60:02d}:{i % 60:02d}Z"))
    assert len(entries) == KEEP and entries[-1]["commit"] == f"c{KEEP + 4:03d}"


def test_each_report_files_its_run_once_under_the_commit_it_ran_on(tmp_path):
    out = tmp_path / "reports"
    first = run_folder(tmp_path / "r1", RESULTS, "abc123")
    build_reports(first, out, html_dir=tmp_path / "h1")
    build_reports(first, out, html_dir=tmp_path / "h1")                       # reported twice: one point
    history = read_history(out / HISTORY)
    assert history == [{"commit": "abc123", "date": "2026-11-01T10:00:00Z", "tier": "smoke",
                        "totals": {"reference": {"convert": [2, 2], "ncnn-cpu fp32": [1, 2]}}}]
    fixed = [r if r.status == "pass" else rec(r.case, "pass") for r in RESULTS]
    build_reports(run_folder(tmp_path / "r2", fixed, "def456", "2026-11-02T10:00:00Z"), out, html_dir=tmp_path / "h2")
    history = read_history(out / HISTORY)
    assert [e["commit"] for e in history] == ["abc123", "def456"]
    assert history[1]["totals"]["reference"]["ncnn-cpu fp32"] == [2, 2]
    # one line per entry: a new run is a one-line diff
    assert (out / HISTORY).read_text().count("\n") == len(history) + 2


def git(folder: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_COMMITTER_DATE": "2026-11-03T12:00:00Z",
           "GIT_AUTHOR_DATE": "2026-11-03T12:00:00Z"}
    return subprocess.run(["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True).stdout


def committed_reports(tmp_path: Path, versions) -> Path:
    """A git repository whose reports/results.jsonl.gz was committed once per version."""
    repo = tmp_path / "repo"
    (repo / "reports").mkdir(parents=True)
    git(repo, "init", "-q")
    for results in versions:
        write_compact(results, repo / "reports" / COMPACT)
        git(repo, "add", "reports")
        git(repo, "commit", "-q", "-m", "results")
    return repo / "reports"


def test_regenerating_from_committed_results_adds_no_point(tmp_path):
    reports = committed_reports(tmp_path, [RESULTS])
    published = git(reports, "log", "-1", "--format=%h", "--abbrev=10").strip()
    for _ in range(2):
        assert main(["report", "--results", str(reports / COMPACT), "--out", str(reports),
                     "--html", str(tmp_path / "html")]) == 0
    history = read_history(reports / HISTORY)
    assert [(e["commit"], e["date"]) for e in history] == [(published, "2026-11-03T12:00:00Z")]


def test_history_from_git_adds_every_committed_version(tmp_path, capsys):
    fixed = [r if r.status == "pass" else rec(r.case, "pass") for r in RESULTS]
    reports = committed_reports(tmp_path, [RESULTS, fixed])
    assert main(["history", str(reports), "--from-git"]) == 0
    history = read_history(reports / HISTORY)
    assert [e["totals"]["reference"]["ncnn-cpu fp32"] for e in history] == [[1, 2], [2, 2]]
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["commit", "date", "tier", "reference"] and out[2].endswith("smoke  4/4")
    assert main(["history", str(reports), "--from-git"]) == 0                 # again: nothing new
    assert len(read_history(reports / HISTORY)) == 2


def test_a_broken_history_file_is_one_clear_error(tmp_path, capsys):
    (tmp_path / HISTORY).write_text("{not json")
    assert main(["history", str(tmp_path)]) == 2
    assert "unreadable history" in capsys.readouterr().err
    run = run_folder(tmp_path / "run", RESULTS, "abc")
    assert main(["report", "--results", str(run), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: report:") and "history.json" in err and "Traceback" not in err
    assert main(["history", str(tmp_path / "nowhere"), "--from-git"]) == 2


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (run.sh installs it)")
def test_html_trend_has_a_point_per_run_and_mode_in_headless_chromium(tmp_path):
    out = tmp_path / "reports"
    upstream = [rec("nn.ReLU/a", "pass", converter="upstream"), rec("nn.ReLU/a", "pass", "convert", converter="upstream")]
    for i, commit in enumerate(("c1", "c2", "c3")):
        results = RESULTS + upstream + [rec("nn.ReLU/a", "pass", backend="onnxruntime")][:i]  # a mode appears
        build_reports(run_folder(tmp_path / commit, results, commit, f"2026-11-0{i + 1}T00:00:00Z"), out,
                      html_dir=tmp_path / "html")
    full = [rec("nn.ReLU/a", "pass", tier="full"), rec("nn.ReLU/a", "pass", "convert", tier="full")]
    build_reports(run_folder(tmp_path / "full", full, "c3", "2026-11-04T00:00:00Z"), out, html_dir=tmp_path / "full-html")
    assert [(e["commit"], e["tier"]) for e in read_history(out / HISTORY)] == \
        [("c1", "smoke"), ("c2", "smoke"), ("c3", "smoke"), ("c3", "full")]
    # the smoke report of c3 (written before the full run) shows the three smoke runs
    dom = render_dom(tmp_path / "html" / "index.html", tmp_path)
    trend = dom.split("id=\"trend\"", 1)[1].split("<h2", 1)[0]
    charts = trend.split("<svg")[1:]
    assert [c.split("data-converter=\"", 1)[1].split("\"", 1)[0] for c in charts] == ["reference", "upstream"]
    # reference: convert and ncnn-cpu in 3 runs, onnxruntime in 2; upstream: 2 modes in 3 runs
    assert [c.count("<circle") for c in charts] == [3 + 3 + 2, 3 + 3]
    assert charts[0].count("<polyline") == 3
    assert "ncnn-cpu fp32: 1/2 (c1, 2026-11-01T00:00:00Z, smoke)" in charts[0]
    assert trend.count("<tr>") == 4 and "3 run(s) of tier smoke" in trend
    dom = render_dom(tmp_path / "full-html" / "index.html", tmp_path)
    assert "1 run(s) of tier full (3 run(s) of other tiers in history.json)" in dom
    assert dom.split("id=\"trend\"", 1)[1].split("<h2", 1)[0].count("<circle") == 2


def test_a_run_records_the_commit_it_ran_on_and_merged_shards_all_of_theirs():
    from pnnx_conformance.environment import suite_commit
    from pnnx_conformance.runinfo import merge_run_infos

    info = run_info("conformance", "smoke", ["reference"], 1, 1, 1.0)
    assert info["commit"] == suite_commit()
    head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=Path(__file__).parent,
                          capture_output=True, text=True).stdout.strip()
    assert info["commit"].rstrip("+") == head          # "+": the checkout differs from HEAD
    shards = [run_info("conformance", "smoke", ["reference"], 1, 1, 1.0, commit=c) for c in ("b1", "a1", "a1", "")]
    assert merge_run_infos(shards)["commit"] == "a1,b1"
