"""Leaving a process without the interpreter's teardown.

Tearing down torch's modules at exit pages in about 190 MB and takes 0.3 to 0.5 s of CPU on the
project's 2-core machine (`import torch` alone peaks at 730 MB with `os._exit`, 917 MB
without). A process of ours that has done its work and closed its files (the `pnnxref`
command, the conformance harness's workers and conversion servers) leaves with `leave`.
Under coverage or a debugger the normal exit runs, so they can save their data."""
from __future__ import annotations

import os
import sys
from typing import NoReturn


def skips_teardown() -> bool:
    """Whether `leave` exits at once (no tracer, no coverage measuring this process)."""
    return sys.gettrace() is None and "coverage" not in sys.modules


def leave(code: int = 0) -> NoReturn:
    """Exit with `code`: Python's stdout and stderr flushed, then os._exit (sys.exit under
    coverage or a debugger). atexit handlers and finalizers do not run: the caller has
    written, flushed and closed everything that must outlive the process."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed, or None under pythonw
            pass
    if skips_teardown():
        os._exit(code)
    sys.exit(code)
