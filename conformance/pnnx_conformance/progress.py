"""A progress bar with ETA on stderr (a line per step when stderr is not a terminal)."""
from __future__ import annotations

import sys
import time
from collections import Counter


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    def __init__(self, total: int, stream=None, width: int = 30, enabled: bool = True) -> None:
        self.total, self.done, self.width = total, 0, width
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self.counts: Counter = Counter()
        self._last_line = 0.0

    def line(self) -> str:
        elapsed = time.monotonic() - self.start
        frac = self.done / self.total if self.total else 1.0
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        bar = "#" * int(frac * self.width) + "." * (self.width - int(frac * self.width))
        bad = sum(n for s, n in self.counts.items() if s not in ("pass", "skipped", "not-supported", "xfail", "not-applicable"))
        return (f"[{bar}] {self.done}/{self.total} {frac:4.0%} elapsed {_clock(elapsed)} "
                f"ETA {_clock(eta)} pass {self.counts['pass']} problems {bad}")

    def update(self, result) -> None:
        self.done += 1
        self.counts[result.status] += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + self.line())
        elif now - self._last_line >= 10 or self.done == self.total:
            self.stream.write(self.line() + "\n")
            self._last_line = now
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
