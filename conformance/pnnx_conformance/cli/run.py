"""`pnnx-conformance run`: a tier through the converters and backends, results.jsonl + junit.xml."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

from pnnx_op_cases.tables import TABLES

from ..tiers import MAX_CASES
from .common import CONVERTER_HELP, csv

# `--zoo`: the model zoo sits above the harness (it imports the harness), so it is named here,
# not imported, as the default case provider is (cases.DEFAULT_PROVIDER)
ZOO_RUN = "pnnx_model_zoo.run:harness_run"


def add(sub) -> None:
    r = sub.add_parser("run", help="run a tier and write results.jsonl + junit.xml")
    r.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    r.add_argument("--op", action="append", help="operator (fnmatch pattern), repeatable or comma-separated")
    r.add_argument("--table", action="append", help=" | ".join(TABLES + ("models",)))
    r.add_argument("--pattern", help="fnmatch pattern on case ids")
    r.add_argument("--max-cases", type=int, default=None,
                   help=f"cap on cases (default: {MAX_CASES['smoke']} for an unfiltered smoke run, else none; "
                        "0: no cap)")
    r.add_argument("--backend", action="append", help="backend name (default: the five built-ins)")
    r.add_argument("--converter", action="append", help=CONVERTER_HELP)
    r.add_argument("--shard", default="1/1", help="K/N: run the K-th of N shards balanced by measured cost "
                   "(see plan); every machine computes the same plan")
    r.add_argument("--costs", help="case cost file the shards are balanced by (default: reports/case_costs.json)")
    r.add_argument("--out", required=True)
    r.add_argument("--jobs", "-j", type=int, default=2, help="worker processes")
    r.add_argument("--timeout", type=float, default=120.0, help="seconds per check")
    r.add_argument("--memory-mb", type=int, default=12288, help="address-space limit per worker")
    r.add_argument("--cases", help="case provider module:function (default: the registry)")
    r.add_argument("--waivers", help="waiver file (default: conformance/waivers.toml)")
    r.add_argument("--keep-artefacts", action="store_true", help="keep converted files under OUT/artefacts")
    r.add_argument("--strict", action="store_true", help="exit 1 on any unwaived failure")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    r.add_argument("--zoo", metavar="OUT", help="also run the model zoo (as python -m pnnx_model_zoo.run --out OUT) "
                   "in this run's worker slots, before the cases, so no slot idles at either's end")
    r.set_defaults(fn=cmd_run)


def cmd_run(args) -> int:
    from .. import backends, converters
    from ..runner import FAILURES, RunOptions, parse_shard, run

    opts = RunOptions(out=Path(args.out), tier=args.tier, ops=csv(args.op), tables=csv(args.table),
                      pattern=args.pattern,
                      backends=csv(args.backend) or list(backends.DEFAULT),
                      converters=csv(args.converter) or list(converters.DEFAULT),
                      shard=parse_shard(args.shard), jobs=args.jobs, timeout_s=args.timeout,
                      memory_mb=args.memory_mb, cases_provider=args.cases,
                      waivers=Path(args.waivers) if args.waivers else None,
                      keep_artefacts=args.keep_artefacts, progress=not args.quiet,
                      max_cases=args.max_cases, costs=Path(args.costs) if args.costs else None)
    zoo = _zoo_run(Path(args.zoo), args.jobs, args.tier) if args.zoo else None
    try:
        summary = run(opts, before=[zoo.stream] if zoo else [])
    finally:
        if zoo:
            zoo.finish()
    counts = ", ".join(f"{s} {n}" for s, n in sorted(summary.counts.items()))
    print(f"{summary.cases} cases, {len(summary.results)} records in {summary.wall_s:.1f} s: {counts}",
          file=sys.stderr)
    print(f"results: {opts.out / 'results.jsonl'}", file=sys.stderr)
    for e in summary.errors:
        print(f"error: {e}", file=sys.stderr)
    failed = args.strict and any(r.status in FAILURES for r in summary.results)
    return 1 if summary.errors or failed else 0


def _zoo_run(out: Path, jobs: int, tier: str):
    module, _, name = ZOO_RUN.partition(":")
    return getattr(importlib.import_module(module), name)(out, jobs, tier)
