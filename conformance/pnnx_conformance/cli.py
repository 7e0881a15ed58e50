"""The `pnnx-conformance` command.

    pnnx-conformance run --tier smoke --out build/conformance [--op nn.Conv2d] [--backend ...]
    pnnx-conformance merge SHARD_DIR... --out DIR
    pnnx-conformance plan --shards N [--tier full] [--converter ...] [--learn RESULTS]
    pnnx-conformance report --results DIR [--out DIR/report] [--readme README.md] [--html DIR] [--bench FILE] [--check]
    pnnx-conformance history [REPORTS] [--from-git]
    pnnx-conformance keygen --out KEY.pem
    pnnx-conformance certify --backend NAME [--key KEY.pem] [--tier smoke] [--op/--table/--pattern ...] [--waivers FILE | --results DIR] [--out DIR]
    pnnx-conformance verify-certificate FILE.json (--trust FINGERPRINT | --pubkey KEY.pub.pem) [--rerun N --backend NAME [--seed S]]
    pnnx-conformance diff OLD NEW [--fail-on-new-failures]
    pnnx-conformance behind RESULTS --route reference-pt --base upstream [--known FILE] [--strict]
    pnnx-conformance freeze --tier smoke --out corpus/
    pnnx-conformance backends
    pnnx-conformance onnx-backend-test [--backends ...] [--out reports]    # the onnx package's backend tests
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pnnx_op_cases.tables import TABLES

from .errors import CheckOutcome
from .tiers import MAX_CASES


def _csv(values: list[str] | None) -> list[str]:
    return [v for item in values or [] for v in item.split(",") if v]


# written out, not imported: the converters pull in torch, and --help should not wait for it
CONVERTER_HELP = ("reference | reference-pt | reference-export | reference-onnx | reference-onnx-dynamo | "
                  "upstream | module:Class, repeatable or comma-separated (default: all but reference-onnx-dynamo)")


def cmd_run(args) -> int:
    from . import backends, converters
    from .runner import RunOptions, parse_shard, run

    opts = RunOptions(out=Path(args.out), tier=args.tier, ops=_csv(args.op), tables=_csv(args.table),
                      pattern=args.pattern,
                      backends=_csv(args.backend) or list(backends.DEFAULT),
                      converters=_csv(args.converter) or list(converters.DEFAULT),
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
    failed = args.strict and any(r.status in _failures() for r in summary.results)
    return 1 if summary.errors or failed else 0


def _zoo_run(out: Path, jobs: int, tier: str | None = None):
    from pnnx_model_zoo.run import ZooRun, select

    return ZooRun(select("all" if tier == "full" else None), out, jobs=jobs)  # the torchvision sweep: full tier


def _failures():
    from .runner import FAILURES

    return FAILURES


def cmd_merge(args) -> int:
    from .merge import merge_folder

    results = merge_folder([Path(p) for p in args.inputs], Path(args.out))
    print(f"merged {len(results)} records into {Path(args.out) / 'results.jsonl'}", file=sys.stderr)
    return 0


def cmd_plan(args) -> int:
    from . import converters
    from .cases import all_cases, select_cases, use_provider
    from .report.committed import load_any
    from .errors import HarnessError
    from .shards import COSTS_FILE, CostModel, learn, plan_shards, plan_text, read_costs, write_costs
    from .tiers import case_limit

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
    ops, tables = _csv(args.op), _csv(args.table)
    limit = case_limit(args.tier, args.max_cases, bool(ops or tables or args.pattern))
    cases = select_cases(args.tier, ops, tables, args.pattern, limit)
    convs = _csv(args.converter) or list(converters.DEFAULT)
    shards = plan_shards(cases, args.shards, convs, CostModel(costs, all_cases()))
    print(f"{args.shards} shard(s) of {len(cases)} {args.tier}-tier case(s) through {', '.join(convs)}, "
          f"by the costs in {costs_path}")
    print(plan_text(shards, args.jobs))
    return 0


def cmd_report(args) -> int:
    from .report import build_reports
    from .report.committed import check_matrix, check_readme

    results, out = Path(args.results), Path(args.out)
    try:
        if args.check:
            given = results if args.results_given else None
            checked = [(out / "support_matrix.md", check_matrix(out, given))]
            if args.readme:
                checked.append((Path(args.readme), check_readme(Path(args.readme), out, given)))
            for path, diff in checked:
                sys.stdout.write(diff)
                print(f"error: {path} differs from what the committed results give; regenerate with "
                      "pnnx-conformance report" if diff else f"{path}: up to date", file=sys.stderr)
            return 1 if any(diff for _, diff in checked) else 0
        written = build_reports(results, out, html_dir=Path(args.html) if args.html else None,
                                readme=Path(args.readme) if args.readme else None,
                                bench=Path(args.bench) if args.bench else None)
    except (ValueError, OSError) as e:
        print(f"error: report: {e}", file=sys.stderr)
        return 2
    for kind, path in written.items():
        print(f"{kind}: {path}", file=sys.stderr)
    return 0


def _report_default(results: Path) -> Path:
    """Without --out, a report goes under its results folder."""
    return (results if results.is_dir() else results.parent) / "report"


def cmd_history(args) -> int:
    from .report.history import HISTORY, from_git, history_text, read_history

    folder = Path(args.reports)
    try:
        entries = from_git(folder) if args.from_git else read_history(folder / HISTORY)
    except (ValueError, OSError) as e:
        print(f"error: history: {e}", file=sys.stderr)
        return 2
    print(history_text(entries) if entries else f"{folder / HISTORY}: no runs recorded")
    return 0


def cmd_certify(args) -> int:
    from .certify import certify

    cert, js, page = certify(args.backend, Path(args.out), tier=args.tier, ops=_csv(args.op), tables=_csv(args.table),
                             pattern=args.pattern, waivers=Path(args.waivers) if args.waivers else None,
                             max_cases=args.max_cases, jobs=args.jobs, cases_provider=args.cases,
                             progress=not args.quiet, key=Path(args.key) if args.key else None,
                             results=Path(args.results) if args.results else None)
    print(f"certificate: {js}\n             {page}\ndigest {cert['digest']}", file=sys.stderr)
    if "signature" in cert:
        print(f"signed by {cert['signature']['fingerprint']}", file=sys.stderr)
    else:
        print("warning: unsigned (no --key): verify-certificate refuses it without --allow-unsigned", file=sys.stderr)
    if cert["backend"]["plugin"] is None:
        print(f"warning: {args.backend} is not part of an installed distribution: the certificate records no plug-in "
              "version (pip install the plug-in package to have it recorded)", file=sys.stderr)
    for mode, c in cert["summary"].items():
        rate = "n/a" if c["pass_rate"] is None else f"{c['pass_rate'] * 100:.1f}%"
        print(f"{cert['backend']['name']} {mode} ({cert['precisions'][mode]['compute']}): {c['passed']}/{c['total']} "
              f"cases passed ({rate}), {c['waived']} waived, {c['failed']} failed, {c['not_applicable']} not applicable",
              file=sys.stderr)
    return 0


def cmd_keygen(args) -> int:
    from .certify import keygen

    private, public, fp = keygen(Path(args.out))
    print(f"private key: {private} (keep it secret)\npublic key:  {public}\nfingerprint: {fp}", file=sys.stderr)
    return 0


def cmd_verify_certificate(args) -> int:
    from .errors import HarnessError
    from .report.certificate import trust_problems
    from .certify import read_certificate, rerun, signer, trusted_fingerprints, verify_file

    name = args.certificate
    if args.rerun and not args.backend:
        raise HarnessError("verify-certificate --rerun needs --backend NAME: the backend to re-run is named by you, "
                           "never taken from the certificate")
    trusted = trusted_fingerprints(args.trust or [], args.pubkey or [])
    problems = verify_file(Path(name), check_cases=not args.no_case_check, trusted=trusted,
                           allow_unsigned=args.allow_unsigned, cases=args.cases)
    who = signer(read_certificate(Path(name)))
    if args.rerun and problems:
        print(f"{name}: not re-run: the certificate does not verify", file=sys.stderr)
    elif args.rerun:
        seed, ran, differences = rerun(Path(name), args.rerun, args.backend, seed=args.seed, jobs=args.jobs,
                                       progress=not args.quiet, cases=args.cases)
        if ran:
            print(f"{name}: re-ran {ran} case(s) drawn with --seed {seed}", file=sys.stderr)
        problems += differences
    for p in problems:
        print(f"{name}: {p}", file=sys.stderr)
    if who:
        cert = read_certificate(Path(name))
        standing = ("trusted" if not trust_problems(cert, trusted) else "signature does not verify" if who in trusted
                    else "not one of the trusted keys" if trusted else "no key pinned")
        print(f"{name}: signed by {who} ({standing})", file=sys.stderr)
    print(f"{name}: " + ("verifies" if not problems else "does NOT verify"), file=sys.stderr)
    return 1 if problems else 0


def cmd_diff(args) -> int:
    from .report.committed import load_any
    from .report.diff import diff_results

    old, new = Path(args.old), Path(args.new)
    for p in (old, new):
        if not p.exists():
            print(f"error: {p}: no such results folder or file", file=sys.stderr)
            return 2
    d = diff_results(load_any(old), load_any(new))
    print("\n".join(d.lines()))
    return 1 if args.fail_on_new_failures and d.newly_failing else 0


def cmd_behind(args) -> int:
    from .errors import HarnessError
    from .report.behind import behind, load_known
    from .report.committed import load_any

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


def cmd_freeze(args) -> int:
    from .freeze import freeze

    manifest = freeze(Path(args.out), args.tier, _csv(args.op), args.cases)
    print(f"froze {len(manifest['cases'])} cases into {args.out}, case-set sha256 {manifest['sha256']}",
          file=sys.stderr)
    return 0


def cmd_verify(args) -> int:
    from .cases import use_provider
    from .freeze import verify

    use_provider(args.cases)
    problems = verify(Path(args.corpus))
    for p in problems:
        print(f"{args.corpus}: {p}", file=sys.stderr)
    print(f"{args.corpus}: " + ("unchanged" if not problems else f"{len(problems)} difference(s)"), file=sys.stderr)
    return 1 if problems else 0


def cmd_pytest(args) -> int:
    import pytest

    from . import suite

    import os

    argv = ["-p", "pnnx_conformance.pytest_plugin", suite.__path__[0], "--conformance-tier", args.tier,
            "-o", f"cache_dir={os.getcwd()}/.pytest_cache", *args.rest]
    return int(pytest.main(argv))


def cmd_backends(args) -> int:
    from .backends import discovered, load_backend

    for name, target in sorted(discovered().items()):
        b = load_backend(name)
        print(f"{name:16} {target}  consumes {'+'.join(b.consumes) or 'the case'}; "
              f"precisions {', '.join(b.precisions)}")
    return 0


def parser() -> argparse.ArgumentParser:
    from pnnx_reference.version_action import VersionAction

    from . import version_line

    p = argparse.ArgumentParser(prog="pnnx-conformance", description="PNNX conformance suite")
    p.add_argument("--version", action=VersionAction, version=version_line("pnnx-conformance"))
    sub = p.add_subparsers(dest="command", required=True)
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
    m = sub.add_parser("merge", help="merge shard results")
    m.add_argument("inputs", nargs="+", help="results.jsonl files or folders holding them")
    m.add_argument("--out", required=True)
    m.set_defaults(fn=cmd_merge)
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
    rep = sub.add_parser("report", help="build reports from results")
    rep.add_argument("--results", help="results folder (or results.jsonl.gz); default with --check: "
                     "OUT/results.jsonl.gz")
    rep.add_argument("--out", help="where support_matrix.md and results.jsonl.gz go (default: RESULTS/report; "
                     "with --check: reports)")
    rep.add_argument("--html", help="HTML report folder (default: RESULTS/html)")
    rep.add_argument("--readme", help="regenerate this README's support-matrix section")
    rep.add_argument("--bench", help="benchmark file from benchmarks/bench_zoo.py (default: OUT/bench.json when "
                     "present; copied there so --check can regenerate the section)")
    rep.add_argument("--check", action="store_true",
                     help="exit 1 (printing a diff) when OUT/support_matrix.md (and --readme's section) "
                          "differs from the committed results")
    rep.set_defaults(fn=cmd_report)
    h = sub.add_parser("history", help="the totals of past runs that `report` kept (REPORTS/history.json)")
    h.add_argument("reports", nargs="?", default="reports")
    h.add_argument("--from-git", action="store_true",
                   help="first add every committed version of REPORTS/results.jsonl.gz")
    h.set_defaults(fn=cmd_history)
    c = sub.add_parser("certify", help="certify a backend on the certification tier")
    c.add_argument("--backend", required=True)
    c.add_argument("--key", help="Ed25519 private key (PEM) to sign the certificate with (see keygen; an encrypted "
                   "key reads its passphrase from $PNNX_CERT_KEY_PASSWORD)")
    c.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    c.add_argument("--waivers", help="vendor waiver file (TOML, see waivers.py)")
    c.add_argument("--out", default="certificates")
    c.add_argument("--op", action="append", help="operator (fnmatch pattern), repeatable or comma-separated")
    c.add_argument("--table", action="append", help="nn | F | Tensor | torch | models | onnx")
    c.add_argument("--pattern", help="fnmatch pattern on case ids")
    c.add_argument("--max-cases", type=int, default=None, help="cap on cases (default: every case of the tier)")
    c.add_argument("--cases", help="case provider module:function")
    c.add_argument("--jobs", "-j", type=int, default=2)
    c.add_argument("--quiet", "-q", action="store_true")
    c.add_argument("--results", help="certify this run's results (e.g. merged shards) instead of running")
    c.set_defaults(fn=cmd_certify)
    vc = sub.add_parser("verify-certificate", help="check a certificate's signature, consistency and case set")
    vc.add_argument("certificate")
    vc.add_argument("--no-case-check", action="store_true",
                    help="do not compare with the installed suite's case set (signature and consistency only)")
    vc.add_argument("--trust", action="append", metavar="FINGERPRINT",
                    help="accept only certificates signed by this key (sha256:...), repeatable")
    vc.add_argument("--pubkey", action="append", metavar="PEM", help="accept only this signer's key, repeatable")
    vc.add_argument("--allow-unsigned", action="store_true",
                    help="accept an unsigned certificate (its digest alone proves nothing)")
    vc.add_argument("--cases", help="the case provider module:function the certificate names, if any: it is "
                    "imported only when you name the same one")
    vc.add_argument("--backend", help="for --rerun: the backend to re-run (entry-point name or module:Class); its "
                    "name and installed versions must be the certified ones")
    vc.add_argument("--rerun", type=int, default=0, metavar="N",
                    help="audit: re-run N cases drawn at random with --backend; any other status fails")
    vc.add_argument("--seed", type=int, default=None, help="the draw of --rerun (default: a fresh one, printed)")
    vc.add_argument("--jobs", "-j", type=int, default=2)
    vc.add_argument("--quiet", "-q", action="store_true")
    vc.set_defaults(fn=cmd_verify_certificate)
    k = sub.add_parser("keygen", help="make an Ed25519 key pair for certify --key")
    k.add_argument("--out", required=True, help="private key file (KEY.pem); the public key goes to KEY.pub.pem")
    k.set_defaults(fn=cmd_keygen)
    d = sub.add_parser("diff", help="newly failing / newly passing cases between two result sets")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--fail-on-new-failures", action="store_true")
    d.set_defaults(fn=cmd_diff)
    b = sub.add_parser("behind", help="records one route does not pass where another does (known gaps listed "
                                      "with reasons in conformance/behind.toml)")
    b.add_argument("results")
    b.add_argument("--route", required=True, help="the converter that may fall behind, e.g. reference-pt")
    b.add_argument("--base", default="upstream", help="the converter it is measured against (default: upstream)")
    b.add_argument("--known", default=str(Path(__file__).resolve().parent.parent / "behind.toml"),
                   help="known gaps with their reasons (default: conformance/behind.toml)")
    b.add_argument("--strict", action="store_true", help="exit 1 on a gap not listed or a listed gap that is gone")
    b.set_defaults(fn=cmd_behind)
    f = sub.add_parser("freeze", help="materialise a tier as a hashed corpus")
    f.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    f.add_argument("--op", action="append")
    f.add_argument("--cases", help="case provider module:function")
    f.add_argument("--out", required=True)
    f.set_defaults(fn=cmd_freeze)
    v = sub.add_parser("verify-corpus", help="check a frozen corpus against the current cases")
    v.add_argument("corpus")
    v.add_argument("--cases", help="case provider module:function")
    v.set_defaults(fn=cmd_verify)
    t = sub.add_parser("pytest", help="run the suite under pytest (arguments go to pytest)",
                       add_help=False)
    t.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    t.set_defaults(fn=cmd_pytest)
    b = sub.add_parser("backends", help="list discovered backends")
    b.set_defaults(fn=cmd_backends)
    o = sub.add_parser("onnx-backend-test", add_help=False,
                       help="the ONNX backend test suite against our ONNX frontend and onnxruntime "
                            "(arguments: python -m pnnx_conformance.onnx_backend --help)")
    o.set_defaults(fn=cmd_onnx_backend_test)
    return p


def cmd_onnx_backend_test(args) -> int:
    from .onnx_backend.__main__ import main as onnx_backend_main

    return onnx_backend_main(args.rest)


def main(argv: list[str] | None = None) -> int:
    import signal

    # a terminated run still stops its workers and removes its scratch folder
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["pytest"], ["onnx-backend-test"]):  # everything after the subcommand goes on
        args, rest = parser().parse_known_args(argv)
        args.rest = rest
    else:
        args = parser().parse_args(argv)
    if getattr(args, "command", "") == "report":
        args.results_given = args.results is not None
        if args.results is None and not args.check:
            parser().error("report: --results is required (except with --check)")
        if args.out is None:  # never the reports/ of whatever checkout the command runs in
            args.out = "reports" if args.check else str(_report_default(Path(args.results)))
        args.results = args.results or str(Path(args.out) / "results.jsonl.gz")
    try:
        return args.fn(args)
    except CheckOutcome as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a folder that cannot be written: one line, not a traceback
        where = f"{e.filename}: " if e.filename else ""
        print(f"error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
