"""`pnnx-conformance behind`: the records one route does not pass where another does."""
from __future__ import annotations

import sys
from pathlib import Path

KNOWN = Path(__file__).resolve().parents[2] / "behind.toml"  # conformance/behind.toml


def add(sub) -> None:
    b = sub.add_parser("behind", help="records one route does not pass where another does (known gaps listed "
                                      "with reasons in conformance/behind.toml)")
    b.add_argument("results")
    b.add_argument("--route", required=True, help="the converter that may fall behind, e.g. reference-pt")
    b.add_argument("--base", default="upstream", help="the converter it is measured against (default: upstream)")
    b.add_argument("--known", default=str(KNOWN), help="known gaps with their reasons (default: conformance/behind.toml)")
    b.add_argument("--strict", action="store_true", help="exit 1 on a gap not listed or a listed gap that is gone")
    b.set_defaults(fn=cmd_behind)


def cmd_behind(args) -> int:
    from ..errors import HarnessError
    from ..report.behind import behind, load_known
    from ..report.committed import load_any

    path = Path(args.results)
    if not path.exists():
        print(f"error: {path}: no such results folder or file", file=sys.stderr)
        return 2
    try:
        known = load_known(Path(args.known))
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    found = behind(load_any(path), args.route, args.base, known)
    print("\n".join(found.lines()))
    return 1 if args.strict and (found.unexplained or found.stale) else 0
