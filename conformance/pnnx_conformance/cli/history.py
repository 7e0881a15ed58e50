"""`pnnx-conformance history`: the totals of past runs that `report` kept."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    h = sub.add_parser("history", help="the totals of past runs that `report` kept (REPORTS/history.json)")
    h.add_argument("reports", nargs="?", default="reports")
    h.add_argument("--from-git", action="store_true",
                   help="first add every committed version of REPORTS/results.jsonl.gz")
    h.set_defaults(fn=cmd_history)


def cmd_history(args) -> int:
    from ..report.history import HISTORY, from_git, history_text, read_history

    folder = Path(args.reports)
    try:
        entries = from_git(folder) if args.from_git else read_history(folder / HISTORY)
    except (ValueError, OSError) as e:
        print(f"error: history: {e}", file=sys.stderr)
        return 2
    print(history_text(entries) if entries else f"{folder / HISTORY}: no runs recorded")
    return 0
