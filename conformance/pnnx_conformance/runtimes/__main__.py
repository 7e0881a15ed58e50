"""`python -m pnnx_conformance.runtimes {collect RUN_DIR... | yardstick | publish [--check]} --out reports/runtimes`
(see __init__.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import HarnessError
from . import board, collect, yardstick


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pnnx_conformance.runtimes")
    sub = parser.add_subparsers(dest="command", required=True)
    kept = sub.add_parser("collect", help="keep runs' results (one folder per runtime) and file their totals")
    kept.add_argument("runs", nargs="+", type=Path)
    stick = sub.add_parser("yardstick", help="onnxruntime on every case some runtime fails")
    stick.add_argument("--fresh", action="store_true", help="measure every case again")
    pub = sub.add_parser("publish", help="scoreboard.md and scoreboard.html from the committed files")
    pub.add_argument("--check", action="store_true", help="exit 1 when the committed pages are stale")
    for p in (kept, stick, pub):
        p.add_argument("--out", type=Path, default=Path("reports/runtimes"))
    args = parser.parse_args(argv)
    try:
        if args.command == "collect":
            for run in args.runs:
                backend, folder = collect.collect(run, args.out)
                print(f"{backend}: {folder}")
        elif args.command == "yardstick":
            data = yardstick.update(args.out, board.load(args.out), fresh=args.fresh)
            passed = sum(v["status"] == "pass" for v in data["cases"].values())
            print(f"yardstick: {passed} of {len(data['cases'])} failing case(s) pass on onnxruntime")
        else:
            stale = board.publish(args.out, check=args.check)
            if args.check and stale:
                print(f"stale: {', '.join(stale)} (regenerate with publish)", file=sys.stderr)
                return 1
    except HarnessError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
