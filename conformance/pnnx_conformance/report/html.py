"""A static HTML report, viewable offline: index with summaries and charts, one page per operator."""
from __future__ import annotations

import html
import math
import re
from collections import defaultdict
from pathlib import Path

from pnnx_op_cases.tables import TABLES

from .matrix import GENERATED_HEADER
from .repro import bundle_dir
from .summary import Summary, error_histogram

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;font-size:13px;text-align:left}
th{background:#f3f3f3}
.pass{background:#d9f2d9}.partial{background:#fff2b3}.fail{background:#f8d0d0}.waived{background:#e6e6e6}.none{color:#999}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:12px;max-height:30em}
.num{font-variant-numeric:tabular-nums;text-align:right}
h1,h2,h3{font-weight:600}
"""

STATUS_CLASS = {"pass": "pass", "xfail": "waived", "skipped": "waived", "not-supported": "fail",
                "not-applicable": "waived"}


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n{GENERATED_HEADER}\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")


def pass_rate_color(value: float) -> str:
    return "#4caf50" if value >= 0.999 else "#ffb300" if value > 0 else "#e53935"


def bar_chart(items: list[tuple[str, float]], title: str, width: int = 640, *, scale: float = 1.0,
              text=lambda v: f"{v * 100:.1f}%", color=pass_rate_color, marker: float | None = None) -> str:
    """Horizontal bars as inline SVG: a bar spans value / scale of the plot (clipped to it);
    `marker` draws a dashed vertical line at that value. Defaults: pass rates in [0, 1]."""
    row_h, label_w = 22, 260
    span = width - label_w - 60
    h = row_h * len(items) + 30
    parts = [f"<svg role='img' aria-label='{html.escape(title)}' width='{width}' height='{h}' xmlns='http://www.w3.org/2000/svg'>",
             f"<text x='0' y='14' font-size='13' font-weight='600'>{html.escape(title)}</text>"]
    for i, (label, value) in enumerate(items):
        y = 24 + i * row_h
        w = max(0.0, min(1.0, value / scale)) * span
        parts.append(f"<text x='0' y='{y + 14}' font-size='12'>{html.escape(label)}</text>"
                     f"<rect x='{label_w}' y='{y}' width='{w:.1f}' height='{row_h - 6}' fill='{color(value)}'/>"
                     f"<text x='{label_w + w + 4:.1f}' y='{y + 14}' font-size='12'>{html.escape(text(value))}</text>")
    if marker is not None:
        x = label_w + min(1.0, marker / scale) * span
        parts.append(f"<line x1='{x:.1f}' y1='20' x2='{x:.1f}' y2='{h}' stroke='#555' stroke-dasharray='4 3'/>")
    parts.append("</svg>")
    return "".join(parts)


def error_distribution_chart(summary: Summary, width: int = 640) -> str:
    """Histogram of log10(max abs error) per backend column, as inline SVG rows of counts."""
    buckets = list(range(-9, 2))  # 1e-9 .. 1e1
    per_col: dict[str, list[int]] = defaultdict(lambda: [0] * (len(buckets) + 1))
    for r in summary.results:
        if r.check != "parity" or r.metrics is None or r.metrics.max_abs is None:
            continue
        label = f"{r.converter}: {r.backend} {r.precision or ''}".strip()
        v = r.metrics.max_abs
        idx = 0 if v <= 0 else min(len(buckets), max(1, int(math.floor(math.log10(v))) - buckets[0] + 1))
        per_col[label][idx] += 1
    if not per_col:
        return "<p>No parity metrics recorded.</p>"
    header = "".join(f"<th>{'0' if i == 0 else f'1e{buckets[i - 1]}'}</th>" for i in range(len(buckets) + 1))
    rows = []
    for label in sorted(per_col):
        counts = per_col[label]
        top = max(counts) or 1
        cells = "".join(
            f"<td class='num' style='background:rgba(33,150,243,{c / top:.2f})'>{c or ''}</td>" for c in counts)
        rows.append(f"<tr><td>{html.escape(label)}</td>{cells}</tr>")
    return ("<table aria-label='max error distribution'><tr><th>column \\ max abs error ≥</th>"
            f"{header}</tr>{''.join(rows)}</table>")


def summary_tables(summary: Summary) -> str:
    out = []
    for table in TABLES + ("models",):
        totals = summary.column_totals(table)
        if not any(t.total for t in totals.values()):
            continue
        out.append(f"<h3>{table}</h3><table class='summary' data-table='{table}'><tr><th>column</th><th>passed</th>"
                   "<th>total</th><th>rate</th><th>statuses</th></tr>")
        for col in summary.columns:
            t = totals.get(col)
            if t and not t.total and t.not_applicable:
                out.append(f"<tr class='waived'><td>{html.escape(col.label)}</td><td class='num'>n/a</td>"
                           f"<td class='num'>n/a</td><td class='num'>n/a</td><td>not-applicable {t.not_applicable}</td></tr>")
                continue
            if not t or not t.total:
                continue
            rate = t.passed / t.total
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(t.statuses.items()))
            out.append(f"<tr class='{t.state}'><td>{html.escape(col.label)}</td><td class='num'>{t.passed}</td>"
                       f"<td class='num'>{t.total}</td><td class='num'>{rate * 100:.1f}%</td><td>{statuses}</td></tr>")
        out.append("</table>")
    return "".join(out)


def index_page(summary: Summary, op_pages: dict[str, str], benchmarks: str = "", trend: str = "") -> str:
    """`benchmarks`: the benchmark section's HTML (report/bench.py), placed before the failures;
    `trend`: the totals across runs (report/history.py), after the pass rates."""
    overall = summary.column_totals()
    bars = [(c.label, overall[c].passed / overall[c].total) for c in summary.columns if overall.get(c) and overall[c].total]
    hist = error_histogram(summary.results)
    hist_rows = "".join(
        f"<tr><td class='num'>{n}</td><td><code>{html.escape(m)}</code></td><td>{', '.join(html.escape(c) for c in ex)}</td></tr>"
        for m, n, ex in hist)
    op_rows = []
    for op in sorted(summary.by_op):
        cells = "".join(
            f"<td class='{summary.cell(op, c).state}'>{summary.cell(op, c).text()}</td>" for c in summary.columns)
        op_rows.append(f"<tr><td><a href='{op_pages[op]}'>{html.escape(op)}</a></td>{cells}</tr>")
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in summary.columns)
    n_cases = len({r.case for r in summary.results})
    body = (
        f"<h1>PNNX conformance report</h1>"
        f"<p id='overview'>{n_cases} cases, {len(summary.by_op)} operators, {len(summary.results)} results.</p>"
        f"<h2>Summary per table and column</h2>{summary_tables(summary)}"
        f"<h2>Pass rate per column</h2>{bar_chart(bars, 'pass rate per converter and backend')}"
        f"{trend}"
        f"<h2>Distribution of max abs errors</h2>{error_distribution_chart(summary)}"
        f"{benchmarks}"
        f"<h2>Most common failures</h2><table id='error-histogram'><tr><th>count</th><th>message</th><th>examples</th></tr>{hist_rows}</table>"
        f"<h2>Operators</h2><table id='operators'><tr><th>operator</th>{head}</tr>{''.join(op_rows)}</table>")
    return page("PNNX conformance report", body)


def op_page(op: str, summary: Summary, results_dir: Path, case_sources: dict[str, str],
            out_dir: Path | None = None) -> str:
    by_case: dict[str, list] = defaultdict(list)
    for r in summary.by_op[op]:
        by_case[r.case].append(r)
    parts = [f"<p><a href='../index.html'>← index</a></p><h1>{html.escape(op)}</h1>"]
    for case_id in sorted(by_case):
        rows = []
        for r in sorted(by_case[case_id], key=lambda r: r.key):
            m = r.metrics
            metr = "" if m is None else " ".join(
                f"{k}={v:.3g}" for k, v in (("max_abs", m.max_abs), ("max_rel", m.max_rel), ("ulp", m.max_ulp),
                                             ("cos", m.cosine), ("mismatch%", m.mismatch_pct)) if v is not None)
            where = r.check + (f" / {r.backend}" if r.backend else "") + (f" {r.precision}" if r.precision else "")
            cls = STATUS_CLASS.get(r.status, "fail")
            rows.append(f"<tr class='{cls}'><td>{html.escape(r.converter)}</td><td>{html.escape(where)}</td>"
                        f"<td class='status'>{html.escape(r.status)}</td><td>{html.escape(r.stage)}</td>"
                        f"<td>{html.escape(metr)}</td>"
                        f"<td>{html.escape(r.error)}</td></tr>")
        parts.append(f"<h2 id='{safe_name(case_id)}'>{html.escape(case_id)}</h2>"
                     f"<table><tr><th>converter</th><th>check</th><th>status</th><th>stage</th><th>metrics</th><th>error</th></tr>{''.join(rows)}</table>")
        parts.append(repro_links(results_dir, Path(out_dir or results_dir / "html"), by_case[case_id]))
        if case_id in case_sources:
            parts.append(f"<details><summary>case source</summary><pre>{html.escape(case_sources[case_id])}</pre></details>")
        for param in find_artefacts(results_dir, case_id, ".pnnx.param"):
            parts.append(f"<details><summary>{html.escape(param.parent.name)} / {html.escape(param.name)}</summary>"
                         f"<pre>{html.escape(param.read_text(errors='replace')[:20000])}</pre></details>")
        details = [r for r in by_case[case_id] if r.detail]
        for r in details[:3]:
            parts.append(f"<details><summary>error detail ({html.escape(r.converter)} {html.escape(r.check)} "
                         f"{html.escape(r.backend or '')})</summary><pre>{html.escape(r.detail[-8000:])}</pre></details>")
    return page(op, "".join(parts))


def case_dir_name(case_id: str) -> str:
    """The harness's folder name for a case (`Case.safe_name`)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", case_id.replace("/", "__"))


def find_artefacts(results_dir: Path, case_id: str, suffix: str) -> list[Path]:
    """Kept artefacts (`run --keep-artefacts`): `<results>/artefacts/<case>/<converter>/`."""
    base = Path(results_dir) / "artefacts" / case_dir_name(case_id)
    if not base.is_dir():
        return []
    return sorted(base.glob(f"*/*{suffix}"))


def repro_links(results_dir: Path, out_dir: Path, results) -> str:
    """Links to the repro bundles of a case's failures, relative to an op page."""
    import os

    items = []
    for r in results:
        folder = bundle_dir(results_dir, r)
        if folder.is_dir():
            rel = os.path.relpath(folder, out_dir / "ops")
            items.append(f"<li><a class='repro' href='{html.escape(rel)}/README.md'>{html.escape(folder.name)}</a></li>")
    return f"<p>Repro bundles:</p><ul>{''.join(items)}</ul>" if items else ""


def write_html(summary: Summary, results_dir: Path, out_dir: Path, benchmarks: str = "", trend: str = "") -> Path:
    from pnnx_op_cases.registry import all_cases

    sources = {c.id: c.source for c in all_cases()}
    out_dir = Path(out_dir)
    (out_dir / "ops").mkdir(parents=True, exist_ok=True)
    op_pages = {op: f"ops/{safe_name(op)}.html" for op in summary.by_op}
    for op, rel in op_pages.items():
        (out_dir / rel).write_text(op_page(op, summary, Path(results_dir), sources, out_dir))
    index = out_dir / "index.html"
    index.write_text(index_page(summary, op_pages, benchmarks, trend))
    return index
