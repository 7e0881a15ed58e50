"""`pnnx-conformance diff`: newly failing and newly passing cases between two result sets."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    d = sub.add_parser("diff", help="newly failing / newly passing cases between two result sets")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--fail-on-new-failures", action="store_true")
    d.set_defaults(fn=cmd_diff)


def cmd_diff(args) -> int:
    from ..report.committed import load_any
    from ..report.diff import diff_results

    old, new = Path(args.old), Path(args.new)
    for p in (old, new):
        if not p.exists():
            print(f"error: {p}: no such results folder or file", file=sys.stderr)
            return 2
    d = diff_results(load_any(old), load_any(new))
    print("\n".join(d.lines()))
    return 1 if args.fail_on_new_failures and d.newly_failing else 0
