"""`pnnx-cases`: list, show and write out the per-operator conformance cases.

    pnnx-cases list [--op OP] [--table T] [--tier smoke|full] [--tag TAG] [--pattern GLOB] [--counts]
    pnnx-cases show CASE_ID
    pnnx-cases write CASE_ID --out DIR
    pnnx-cases where OP [--json]      every piece of an operator as file:line (see where.py)

Bad input prints one line `error: ...` to stderr and exits 2.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter

from pnnx_reference.errors import PnnxError, UsageError

from . import registry, tables
from .case import KNOWN_TAGS, Case


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):          # argparse would print usage and exit 2 itself
        raise UsageError(message)


def _build_parser() -> argparse.ArgumentParser:
    from . import version_line
    from pnnx_reference.version_action import VersionAction

    p = _Parser(prog="pnnx-cases", description="per-operator conformance cases")
    p.add_argument("--version", action=VersionAction, version=version_line("pnnx-cases"))
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    ls = sub.add_parser("list", help="list case ids (or counts) matching the filters")
    ls.add_argument("--op", help="table row, e.g. nn.Conv2d")
    ls.add_argument("--table", choices=tables.TABLES)
    ls.add_argument("--tier", choices=("smoke", "full"), default="full")
    ls.add_argument("--tag")
    ls.add_argument("--pattern", help="glob over case ids, e.g. 'nn.Conv*/k3*'")
    ls.add_argument("--counts", action="store_true",
                    help="rows covered and cases per table and tier, plus totals")
    show = sub.add_parser("show", help="print a case's source and inputs")
    show.add_argument("case_id")
    write = sub.add_parser("write", help="write CASE.py, CASE.pt and .npy inputs/outputs")
    write.add_argument("case_id")
    write.add_argument("--out", required=True, help="output folder (created)")
    where = sub.add_parser("where", help="file:line of every piece of an operator: table row, case "
                                         "families, each door's frontend rules, emitters, tolerances, "
                                         "waivers")
    where.add_argument("op", help="table row or emitted operator, e.g. nn.Conv2d")
    where.add_argument("--json", action="store_true", help="one JSON object instead of text")
    return p


def _case(case_id: str) -> Case:
    try:
        return registry.get_case(case_id)
    except KeyError:
        raise UsageError(f"unknown case id {case_id!r} (see `pnnx-cases list`)") from None


def _check_filters(args) -> None:
    if args.op and args.op not in {r.op for r in tables.all_rows()}:
        raise UsageError(f"unknown operator {args.op!r}: not a row of any table")
    if args.tag:
        used = set().union(*(c.tags for c in registry.all_cases()))
        if args.tag not in KNOWN_TAGS | used:
            raise UsageError(f"unknown tag {args.tag!r}; known: {', '.join(sorted(KNOWN_TAGS | used))}")


def counts_table(cases) -> str:
    """Per table: rows, rows covered, smoke cases, full cases; then totals."""
    ops = {c.op for c in cases}
    smoke = Counter(c.table for c in cases if c.tier == "smoke")
    full = Counter(c.table for c in cases)
    lines = [f"{'table':<8}{'rows':>6}{'covered':>9}{'smoke':>8}{'full':>8}"]
    totals = [0, 0, 0, 0]
    for t in tables.TABLES:
        rows = tables.load_table(t)
        vals = [len(rows), sum(r.op in ops for r in rows), smoke[t], full[t]]
        totals = [a + b for a, b in zip(totals, vals)]
        lines.append(f"{t:<8}{vals[0]:>6}{vals[1]:>9}{vals[2]:>8}{vals[3]:>8}")
    lines.append(f"{'total':<8}{totals[0]:>6}{totals[1]:>9}{totals[2]:>8}{totals[3]:>8}")
    return "\n".join(lines)


def cmd_list(args) -> None:
    _check_filters(args)
    if args.counts:
        # counts always show both tiers, over the other filters
        cases = registry.select(op=args.op, table=args.table, tag=args.tag, pattern=args.pattern)
        print(counts_table(cases))
        return
    for case in registry.select(op=args.op, table=args.table, tier=args.tier, tag=args.tag,
                                pattern=args.pattern):
        print(case.id)


def describe(case: Case) -> str:
    lines = [case.source.rstrip(), "", f"# id: {case.id}", f"# row: {case.op} (table {case.table})",
             f"# tier: {case.tier}", f"# tags: {', '.join(sorted(case.tags)) or '-'}"]
    for tag, why in sorted(case.reasons.items()):
        lines.append(f"# {tag}: {why}")
    if case.tolerance:
        t = case.tolerance
        lines.append(f"# tolerance: atol={t.atol} rtol={t.rtol} ({t.reason})")
    lines.append(f"# weight seed: {case.weight_seed}; inputs: torch.manual_seed(0), in order")
    for i, s in enumerate(case.inputs):
        lines.append(f"# x{i}: shape {s.shape} {s.dtype} in [{s.low:g}, {s.high:g})")
    return "\n".join(lines)


def cmd_show(args) -> None:
    print(describe(_case(args.case_id)))


def cmd_write(args) -> None:
    from .standalone import write_case

    case = _case(args.case_id)
    for path in write_case(case, args.out):
        print(path)
    if "no-trace" in case.tags:
        print(f"note: no .pt for {case.id}: {case.reasons.get('no-trace')}", file=sys.stderr)


def cmd_where(args) -> None:
    import json

    from . import where

    found = where.pieces(args.op)
    print(json.dumps(where.as_json(args.op, found), indent=1) if args.json else where.render(args.op, found))


COMMANDS = {"list": cmd_list, "show": cmd_show, "write": cmd_write, "where": cmd_where}


def main(argv: list[str] | None = None) -> int:
    try:
        args = _build_parser().parse_args(argv)
        COMMANDS[args.command](args)
    except PnnxError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as err:
        print(f"error: {err.strerror}: {err.filename}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
