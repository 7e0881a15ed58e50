"""`pnnx-conformance plan`: the shards `run --shard K/N` would run, with their predicted times."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import csv


def add(sub) -> None:
    pl = sub.add_parser("plan", help="the shards `run --shard K/N` would run: cases and predicted time of each")
    pl.add_argument("--shards", type=int, required=True, help="N")
    pl.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    pl.add_argument("--op", action="append", help="operator (fnmatch pattern), as run's")
    pl.add_argument("--table", action="append")
    pl.add_argument("--pattern")
    pl.add_argument("--max-cases", type=int, default=None)
    pl.add_argument("--converter", action="append", help="as run's")
    pl.add_argument("--costs", help="case cost file (default: reports/case_costs.json)")
    pl.add_argument("--learn", action="append", metavar="RESULTS",
                    help="first fold the measured times of these results (folders or .jsonl.gz) into the cost file")
    pl.add_argument("--cases", help="case provider module:function")
    pl.add_argument("--jobs", "-j", type=int, default=2, help="worker processes per shard, for the wall-time column")
    pl.set_defaults(fn=cmd_plan)


def cmd_plan(args) -> int:
    from .. import converters
    from ..cases import all_cases, select_cases, use_provider
    from ..errors import HarnessError
    from ..report.committed import load_any
    from ..shards import COSTS_FILE, CostModel, learn, plan_shards, plan_text, read_costs, write_costs
    from ..tiers import case_limit

    if args.shards < 1:
        raise HarnessError(f"--shards {args.shards}: need at least 1")
    use_provider(args.cases)
    costs_path = Path(args.costs) if args.costs else COSTS_FILE
    costs = {} if args.learn and not costs_path.exists() else read_costs(Path(args.costs) if args.costs else None)
    if args.learn:
        for p in map(Path, args.learn):
            if not p.exists():
                print(f"error: {p}: no such results folder or file", file=sys.stderr)
                return 2
        records = [r for p in args.learn for r in load_any(Path(p))]
        costs = read_costs(write_costs(costs_path, learn(costs, records, {c.id for c in all_cases()})))
        print(f"{costs_path}: costs of {len({(r.case, r.converter) for r in records})} case x converter "
              "pair(s) learnt", file=sys.stderr)
    ops, tables = csv(args.op), csv(args.table)
    limit = case_limit(args.tier, args.max_cases, bool(ops or tables or args.pattern))
    cases = select_cases(args.tier, ops, tables, args.pattern, limit)
    convs = csv(args.converter) or list(converters.DEFAULT)
    shards = plan_shards(cases, args.shards, convs, CostModel(costs, all_cases()))
    print(f"{args.shards} shard(s) of {len(cases)} {args.tier}-tier case(s) through {', '.join(convs)}, "
          f"by the costs in {costs_path}")
    print(plan_text(shards, args.jobs))
    return 0
