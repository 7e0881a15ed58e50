"""`pnnx-conformance certify`: one backend on the certification tier, a (signed) certificate."""
from __future__ import annotations

import sys
from pathlib import Path

from .common import csv


def add(sub) -> None:
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


def cmd_certify(args) -> int:
    from ..certify import certify

    cert, js, page = certify(args.backend, Path(args.out), tier=args.tier, ops=csv(args.op), tables=csv(args.table),
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
