"""`pnnx-conformance verify-corpus`: a frozen corpus against the current cases."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    v = sub.add_parser("verify-corpus", help="check a frozen corpus against the current cases")
    v.add_argument("corpus")
    v.add_argument("--cases", help="case provider module:function")
    v.set_defaults(fn=cmd_verify)


def cmd_verify(args) -> int:
    from ..cases import use_provider
    from ..freeze import verify

    use_provider(args.cases)
    problems = verify(Path(args.corpus))
    for p in problems:
        print(f"{args.corpus}: {p}", file=sys.stderr)
    print(f"{args.corpus}: " + ("unchanged" if not problems else f"{len(problems)} difference(s)"), file=sys.stderr)
    return 1 if problems else 0
