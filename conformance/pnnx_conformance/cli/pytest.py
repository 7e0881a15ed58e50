"""`pnnx-conformance pytest`: the suite under pytest (every argument after the subcommand
that is not its own goes to pytest)."""
from __future__ import annotations

import os


def add(sub) -> None:
    t = sub.add_parser("pytest", help="run the suite under pytest (arguments go to pytest)",
                       add_help=False)
    t.add_argument("--tier", default="smoke", choices=("smoke", "full"))
    t.set_defaults(fn=cmd_pytest)


def cmd_pytest(args) -> int:
    import pytest

    from .. import suite

    argv = ["-p", "pnnx_conformance.pytest_plugin", suite.__path__[0], "--conformance-tier", args.tier,
            "-o", f"cache_dir={os.getcwd()}/.pytest_cache", *args.rest]
    return int(pytest.main(argv))
