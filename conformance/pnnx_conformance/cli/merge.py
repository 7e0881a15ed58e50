"""`pnnx-conformance merge`: shard results into one results.jsonl."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
    m = sub.add_parser("merge", help="merge shard results")
    m.add_argument("inputs", nargs="+", help="results.jsonl files or folders holding them")
    m.add_argument("--out", required=True)
    m.set_defaults(fn=cmd_merge)


def cmd_merge(args) -> int:
    from ..merge import merge_folder

    results = merge_folder([Path(p) for p in args.inputs], Path(args.out))
    print(f"merged {len(results)} records into {Path(args.out) / 'results.jsonl'}", file=sys.stderr)
    return 0
