"""`--version` for the argparse command lines: argparse's own `version` action wraps the line
at the terminal width; this one prints it whole."""
from __future__ import annotations

import argparse
import sys


class VersionAction(argparse.Action):
    def __init__(self, option_strings, version: str, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and the upstream releases the output targets, and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)
        self.version = version

    def __call__(self, parser, namespace, values, option_string=None):
        print(self.version, file=sys.stdout)
        parser.exit()
