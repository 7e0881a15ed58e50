"""`pnnx-conformance verify-certificate`: a certificate's signature, consistency and case set,
and an audit that re-runs a sample of its cases."""
from __future__ import annotations

import sys
from pathlib import Path


def add(sub) -> None:
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


def cmd_verify_certificate(args) -> int:
    from ..certify import read_certificate, rerun, signer, trusted_fingerprints, verify_file
    from ..errors import HarnessError
    from ..report.certificate import trust_problems

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
