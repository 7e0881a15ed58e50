"""`pnnx-conformance report`: support matrix, README section, HTML and history from results."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    rep = sub.add_parser("report", help="build reports from results")
    rep.add_argument("--results", help="results folder (or results.jsonl.gz); default with --check: "
                     "OUT/results.jsonl.gz")
    rep.add_argument("--out", help="where support_matrix.md and results.jsonl.gz go (default: RESULTS/report; "
                     "with --check: reports)")
    rep.add_argument("--html", help="HTML report folder (default: RESULTS/html)")
    rep.add_argument("--readme", help="regenerate this README's support-matrix section")
    rep.add_argument("--bench", help="benchmark file from benchmarks/bench_zoo.py (default: OUT/bench.json when "
                     "present; copied there so --check can regenerate the section)")
    rep.add_argument("--check", action="store_true",
                     help="exit 1 (printing a diff) when OUT/support_matrix.md (and --readme's section) "
                          "differs from the committed results")
    rep.set_defaults(fn=cmd_report, prepare=prepare)


def prepare(args, parser) -> None:
    """The defaults that depend on other options; `parser` reports a missing --results."""
    args.results_given = args.results is not None
    if args.results is None and not args.check:
        parser.error("report: --results is required (except with --check)")
    if args.out is None:  # never the reports/ of whatever checkout the command runs in
        args.out = "reports" if args.check else str(_report_default(Path(args.results)))
    args.results = args.results or str(Path(args.out) / "results.jsonl.gz")


def _report_default(results: Path) -> Path:
    """Without --out, a report goes under its results folder."""
    return (results if results.is_dir() else results.parent) / "report"


def cmd_report(args) -> int:
    from ..report import build_reports
    from ..report.committed import check_matrix, check_readme

    results, out = Path(args.results), Path(args.out)
    try:
        if args.check:
            given = results if args.results_given else None
            checked = [(out / "support_matrix.md", check_matrix(out, given))]
            if args.readme:
                checked.append((Path(args.readme), check_readme(Path(args.readme), out, given)))
            for path, diff in checked:
                sys.stdout.write(diff)
                print(f"error: {path} differs from what the committed results give; regenerate with "
                      "pnnx-conformance report" if diff else f"{path}: up to date", file=sys.stderr)
            return 1 if any(diff for _, diff in checked) else 0
        written = build_reports(results, out, html_dir=Path(args.html) if args.html else None,
                                readme=Path(args.readme) if args.readme else None,
                                bench=Path(args.bench) if args.bench else None)
    except (ValueError, OSError) as e:
        print(f"error: report: {e}", file=sys.stderr)
        return 2
    for kind, path in written.items():
        print(f"{kind}: {path}", file=sys.stderr)
    return 0
