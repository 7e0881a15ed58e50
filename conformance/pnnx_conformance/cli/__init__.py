"""The `pnnx-conformance` command: one module per subcommand, each adding its parser
(`add(sub)`) and holding its handler (`cmd_*`).

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

from ..errors import CheckOutcome
from . import (backends, behind, certify, diff, freeze, history, keygen, merge, onnx_backend, plan, pytest, report,
               run, verify_certificate, verify_corpus)
from .common import CONVERTER_HELP

# in the order `--help` lists them
COMMANDS = (run, merge, plan, report, history, certify, verify_certificate, keygen, diff, behind, freeze,
            verify_corpus, pytest, backends, onnx_backend)
PASS_ON = ("pytest", "onnx-backend-test")  # everything after these subcommands goes on to them


def parser() -> argparse.ArgumentParser:
    from pnnx_reference.version_action import VersionAction

    from .. import version_line

    p = argparse.ArgumentParser(prog="pnnx-conformance", description="PNNX conformance suite")
    p.add_argument("--version", action=VersionAction, version=version_line("pnnx-conformance"))
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    import signal

    # a terminated run still stops its workers and removes its scratch folder
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    argv = sys.argv[1:] if argv is None else argv
    p = parser()
    if argv[:1] and argv[0] in PASS_ON:
        args, rest = p.parse_known_args(argv)
        args.rest = rest
    else:
        args = p.parse_args(argv)
    if hasattr(args, "prepare"):
        args.prepare(args, p)
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


__all__ = ["COMMANDS", "CONVERTER_HELP", "main", "parser"]
