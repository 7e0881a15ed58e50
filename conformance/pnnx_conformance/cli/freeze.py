"""`pnnx-conformance freeze`: a tier materialised as a hashed corpus."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import csv


def add(sub) -> None:
    f = sub.add_parser("freeze", help="materialise a tier as a hashed corpus")
    f.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    f.add_argument("--op", action="append")
    f.add_argument("--cases", help="case provider module:function")
    f.add_argument("--out", required=True)
    f.set_defaults(fn=cmd_freeze)


def cmd_freeze(args) -> int:
    from ..freeze import freeze

    manifest = freeze(Path(args.out), args.tier, csv(args.op), args.cases)
    print(f"froze {len(manifest['cases'])} cases into {args.out}, case-set sha256 {manifest['sha256']}",
          file=sys.stderr)
    return 0
