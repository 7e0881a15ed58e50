"""The trend of a reports folder's totals across runs: `history.json` beside the committed
results, and the HTML report's trend chart drawn from it.

Every `pnnx-conformance report` files its run's totals (per converter x check/backend: cases
passing / run) under the commit the run was made on, its date and its tier. One entry per
commit and tier (a later report of the same run replaces it); the newest `KEEP` are kept.
Results regenerated from a committed `results.jsonl.gz` belong to the commit that
published that file, so regenerating never adds a point. `pnnx-conformance history
--from-git REPORTS` adds the entries of every committed version of REPORTS/results.jsonl.gz.
"""
from __future__ import annotations

import gzip
import html
import io
import json
import os
import subprocess
import time
from pathlib import Path

from .matrix import short_label
from .summary import CHECK_ORDER, Column, Summary, converter_order, mode_key, summarize

HISTORY = "history.json"
KEEP = 50   # entries; about 0.6 KB each with two converters
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#393b79", "#637939")


# ---- entries ----

def run_totals(summary: Summary) -> dict[str, dict[str, list[int]]]:
    """converter -> check or backend mode -> [passed, run]."""
    out: dict[str, dict[str, list[int]]] = {}
    totals = summary.column_totals()
    for col in summary.columns:
        out.setdefault(col.converter, {})[short_label(col)] = [totals[col].passed, totals[col].total]
    return out


def run_tier(summary: Summary) -> str:
    """The tier(s) of the operator cases ("zoo" for a run of whole networks only)."""
    tiers = {r.tier for r in summary.results if r.table != "models"}
    return "+".join(sorted(tiers)) if tiers else "zoo"


def make_entry(summary: Summary, commit: str, date: str) -> dict:
    return {"commit": commit or "unknown", "date": date, "tier": run_tier(summary), "totals": run_totals(summary)}


def add_entry(entries: list[dict], entry: dict, keep: int = KEEP) -> list[dict]:
    """`entries` with `entry` in place of any of the same commit and tier, oldest first."""
    same = (entry["commit"], entry["tier"])
    kept = [e for e in entries if (e.get("commit"), e.get("tier")) != same] + [entry]
    kept.sort(key=lambda e: (e.get("date", ""), e.get("commit", "")))
    return kept[-keep:]


def read_history(path: Path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        return []
    try:
        entries = json.loads(path.read_text())
    except ValueError as e:
        raise ValueError(f"{path}: unreadable history ({e})") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "totals" in e for e in entries):
        raise ValueError(f"{path}: not a history file (a list of entries with totals)")
    return entries


def write_history(path: Path, entries: list[dict]) -> Path:
    """One entry per line, so a new run is a one-line diff."""
    lines = [json.dumps(e, sort_keys=True, separators=(",", ":")) for e in entries]
    Path(path).write_text("[\n" + ",\n".join(lines) + "\n]\n")
    return Path(path)


# ---- which run: commit and date ----

def git(folder: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, timeout=30,
                              env={**os.environ, "TZ": "UTC"})  # dates: format-local in UTC
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def publishing_commit(path: Path) -> str:
    """The last commit that changed a committed results file ("" when git does not track it)."""
    path = Path(path).resolve()
    return git(path.parent, "log", "-1", "--format=%h", "--abbrev=10", "--", path.name)


def commit_date(folder: Path, commit: str) -> str:
    return git(folder, "show", "-s", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", commit)


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_identity(runs: list[dict], compact: Path | None) -> tuple[str, str]:
    """(commit, date) of a run: the commit its runs recorded (run.json), else, for results
    read from a committed `compact` file, the commit that published it, else "unknown"; the
    date the runs finished, else the publishing commit's date, else now."""
    commits = sorted({r["commit"] for r in runs if r.get("commit")})
    dates = [r["finished_utc"] for r in runs if r.get("finished_utc")]
    published = publishing_commit(compact) if compact is not None else ""
    commit = ",".join(commits) or published or "unknown"
    date = max(dates) if dates else (commit_date(Path(compact).resolve().parent, published) if published else "")
    return commit, date or now_utc()


def record_run(reports_dir: Path, summary: Summary, runs: list[dict], compact: Path | None) -> list[dict]:
    """Add this run to REPORTS/history.json; returns the entries. `compact`: the committed
    results file the results were read from, if they were."""
    path = Path(reports_dir) / HISTORY
    commit, date = run_identity(runs, compact)
    entries = add_entry(read_history(path), make_entry(summary, commit, date))
    write_history(path, entries)
    return entries


def from_git(reports_dir: Path, compact: str = "results.jsonl.gz", runs_file: str = "suite_runs.json") -> list[dict]:
    """Entries for every committed version of REPORTS/results.jsonl.gz, added to its history."""
    from ..results import Result

    folder = Path(reports_dir).resolve()
    entries = read_history(folder / HISTORY)
    commits = git(folder, "log", "--format=%h", "--abbrev=10", "--", compact).split()
    if not commits:
        raise ValueError(f"{folder}: git has no committed {compact} there")
    for commit in reversed(commits):
        blob = subprocess.run(["git", "show", f"{commit}:./{compact}"], cwd=folder, capture_output=True,
                              timeout=60).stdout
        with gzip.open(io.BytesIO(blob), "rt") as f:
            results = [Result.from_dict(json.loads(line)) for line in f if line.strip()]
        runs = json.loads(git(folder, "show", f"{commit}:./{runs_file}") or "[]")
        dates = [r["finished_utc"] for r in runs if r.get("finished_utc")]
        ran_on = sorted({r["commit"] for r in runs if r.get("commit")})
        entry = make_entry(summarize(results), ",".join(ran_on) or commit,
                           max(dates) if dates else commit_date(folder, commit))
        entries = add_entry(entries, entry)
    write_history(folder / HISTORY, entries)
    return entries


# ---- the HTML trend ----

def mode_order(label: str):
    """Where a check or backend mode ("convert", "ncnn-cpu fp32") goes: as in the matrix."""
    what, _, precision = label.partition(" ")
    if what in CHECK_ORDER:
        return mode_key(Column("", what))
    return mode_key(Column("", "parity", what, precision))


def rate(pair) -> float:
    return pair[0] / pair[1] if pair[1] else 0.0


def mode_colors(entries: list[dict]) -> dict[str, str]:
    """A color per check/backend mode, the same in every converter's chart."""
    modes = sorted({m for e in entries for totals in e["totals"].values() for m in totals}, key=mode_order)
    return {m: COLORS[i % len(COLORS)] for i, m in enumerate(modes)}


def trend_chart(entries: list[dict], converter: str, colors: dict[str, str], width: int = 720,
                height: int = 240) -> str:
    """Pass rate per check/backend mode of one converter, one point per entry (x: the entry's
    place in the history, y: passed / run), as inline SVG."""
    modes = sorted({m for e in entries for m in e["totals"].get(converter, {})}, key=mode_order)
    values = [rate(e["totals"][converter][m]) for e in entries for m in modes if m in e["totals"].get(converter, {})]
    low = min([0.9] + [int(v * 10) / 10 for v in values])
    left, right, top, bottom = 50, 190, 26, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(1, len(entries) - 1)

    def x(i):
        return left + (i * step if len(entries) > 1 else plot_w / 2)

    def y(v):
        return top + (1 - (v - low) / (1 - low or 1)) * plot_h

    title = f"{converter}: pass rate per check and backend"
    parts = [f"<svg class='trend' data-converter='{html.escape(converter)}' role='img' aria-label='{html.escape(title)}' "
             f"width='{width}' height='{height}' xmlns='http://www.w3.org/2000/svg'>",
             f"<text x='0' y='14' font-size='13' font-weight='600'>{html.escape(title)}</text>"]
    for k in range(6):
        v = low + (1 - low) * k / 5
        parts.append(f"<line x1='{left}' x2='{left + plot_w}' y1='{y(v):.1f}' y2='{y(v):.1f}' stroke='#ddd'/>"
                     f"<text x='{left - 4}' y='{y(v) + 4:.1f}' font-size='11' text-anchor='end'>{v * 100:.0f}%</text>")
    for i, e in enumerate(entries):
        parts.append(f"<text x='{x(i):.1f}' y='{top + plot_h + 14}' font-size='10' text-anchor='middle'>"
                     f"{html.escape(e['commit'][:7])}</text>")
    for n, mode in enumerate(modes):
        color = colors[mode]
        pts = [(x(i), y(rate(e["totals"][converter][mode])), e) for i, e in enumerate(entries)
               if mode in e["totals"].get(converter, {})]
        if len(pts) > 1:
            parts.append(f"<polyline fill='none' stroke='{color}' stroke-width='1.5' points='"
                         + " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in pts) + "'/>")
        for px, py, e in pts:
            passed, run = e["totals"][converter][mode]
            tip = f"{mode}: {passed}/{run} ({e['commit']}, {e['date']}, {e['tier']})"
            parts.append(f"<circle class='point' cx='{px:.1f}' cy='{py:.1f}' r='3' fill='{color}'>"
                         f"<title>{html.escape(tip)}</title></circle>")
        ly = top + 12 * n
        parts.append(f"<rect x='{left + plot_w + 12}' y='{ly}' width='10' height='10' fill='{color}'/>"
                     f"<text x='{left + plot_w + 26}' y='{ly + 9}' font-size='11'>{html.escape(mode)}</text>")
    parts.append("</svg>")
    return "".join(parts)


def trend_html(entries: list[dict], tier: str) -> str:
    """The index page's "Trend" section: the runs of `tier`, a chart per converter and a table
    of each run's totals per converter."""
    same = [e for e in entries if e.get("tier") == tier]
    if not same:
        return ""
    converters = sorted({c for e in same for c in e["totals"]}, key=converter_order)
    others = len(entries) - len(same)
    note = f" ({others} run(s) of other tiers in {HISTORY})" if others else ""
    rows = []
    for e in reversed(same):
        cells = "".join(f"<td class='num'>{_sum(e['totals'].get(c, {}))}</td>" for c in converters)
        rows.append(f"<tr><td><code>{html.escape(e['commit'])}</code></td><td>{html.escape(e['date'])}</td>{cells}</tr>")
    head = "".join(f"<th>{html.escape(c)}: passed / run</th>" for c in converters)
    return (f"<h2 id='trend'>Trend across runs</h2><p>{len(same)} run(s) of tier {html.escape(tier)}{note}, oldest "
            f"first; hover a point for its numbers.</p>" + "".join(trend_chart(same, c, mode_colors(same)) for c in converters)
            + f"<table id='trend-runs'><tr><th>commit</th><th>date</th>{head}</tr>{''.join(rows)}</table>")


def _sum(totals: dict[str, list[int]]) -> str:
    if not totals:
        return "·"
    return f"{sum(p for p, _ in totals.values())}/{sum(n for _, n in totals.values())}"


def history_text(entries: list[dict]) -> str:
    """A plain table: a line per entry with each converter's passed / run over all its columns."""
    converters = sorted({c for e in entries for c in e["totals"]}, key=converter_order)
    lines = ["  ".join(["commit", "date", "tier"] + converters)]
    for e in entries:
        lines.append("  ".join([e["commit"], e["date"], e["tier"]] + [_sum(e["totals"].get(c, {})) for c in converters]))
    return "\n".join(lines)
