"""Where a failure happened, and the line of its message that names the cause: what a runtime
vendor acts on.

Stages of a parity record: convert (the route's converter failed or declined), load (the
backend's prepare), compile (its compile), run (its run), mismatch (it ran; outputs, their
number, shapes or values differ from the oracle's). A worker marks each stage on its log
before entering it, so a crash, a timeout or a memory blow-up is placed too."""
from __future__ import annotations

import re
import sys

STAGES = ("convert", "load", "compile", "run", "mismatch")
BY_STATUS = {"fail-convert": "convert", "fail-numeric": "mismatch"}
MARK = "pnnx-conformance stage: "
_marking = {"on": False, "stage": ""}   # on in a worker process, whose stdout is its log
# a line that only says where an error was raised and that the cause follows ("Exception from
# src/inference/src/cpp/core.cpp:84:", "Check 'x' failed at src/.../graph.cpp:243:")
_LOCATION = re.compile(r"\S+\.(?:c|cc|cpp|cxx|h|hh|hpp|cu|py)(?::\d+)+:\s*$")
_LOCATION_ONLY = re.compile(r"^(?:\w+(?:\.\w+)*: )?(?:exception from|check .* failed at|in|at|from)?\s*\S+"
                            r"\.(?:c|cc|cpp|cxx|h|hh|hpp|cu|py)(?::\d+)+:?\s*$", re.I)


def enable_marks() -> None:
    _marking["on"] = True


def mark(stage: str) -> None:
    """Entering `stage` ("" at the start of a unit)."""
    _marking["stage"] = stage
    if _marking["on"] and stage:
        print(MARK + stage, flush=True)
        sys.stderr.flush()


def current() -> str:
    """The stage the unit in this process is in (for a MemoryError caught in it)."""
    return _marking["stage"]


def last_marked(log_tail: str) -> str:
    """The stage a worker was in when it died: its log's last mark."""
    found = [line[len(MARK):].strip() for line in log_tail.splitlines() if line.startswith(MARK)]
    return found[-1] if found and found[-1] in STAGES else ""


def cause_line(text: str, limit: int = 300) -> str:
    """The first line of a (multi-line) error that says what went wrong, not merely where: a
    C++ runtime's "Exception from src/...core.cpp:84:" heading is passed over for the line
    below it that names the cause; the exception's type is kept in front."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    kind = re.match(r"^(\w+(?:\.\w+)*): ", lines[0])
    for line in lines:
        if _LOCATION.search(line) or _LOCATION_ONLY.match(line):
            continue
        if kind and not line.startswith(kind.group(0)):
            line = kind.group(0) + line
        return line[:limit]
    return lines[0][:limit]
