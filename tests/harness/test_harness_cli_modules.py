"""`pnnx-conformance` is one module per subcommand (issue 30 item 5): each module of
`pnnx_conformance/cli/` adds one subparser and holds the handler it runs, so a subcommand is
read, changed and tested in one file; and `--help` does not import what a command runs."""
from __future__ import annotations

import argparse
import subprocess
import sys

from pnnx_conformance import cli


def _subparsers() -> dict:
    return next(a for a in cli.parser()._actions if a.dest == "command").choices


def test_every_subcommand_is_added_by_one_module_that_holds_its_handler():
    owners = {}
    for module in cli.COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        module.add(sub)
        [name] = sub.choices  # one subcommand per module
        owners[name] = module
        assert sub.choices[name].get_default("fn").__module__ == module.__name__, name
    assert set(owners) == set(_subparsers())
    assert set(cli.PASS_ON) <= set(owners)


def test_help_imports_neither_torch_nor_the_model_zoo():
    code = ("import sys; from pnnx_conformance.cli import parser; parser().format_help(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'pnnx_model_zoo')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
