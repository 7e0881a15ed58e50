"""Bounded, streaming line reading for the text formats (hostile files stay cheap)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..errors import FormatError


def is_digits(text: str) -> bool:
    """ASCII digits only: `str.isdigit()` also accepts `²` and `³`, which `int()` refuses."""
    return text.isascii() and text.isdigit()


def read_text_lines(path: Path, max_bytes: int, max_line: int) -> Iterator[str]:
    """Yield decoded lines without their newline. Refuses files over `max_bytes` before
    reading and lines over `max_line` bytes after reading at most that much of them."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise FormatError(path, f"file is {size} bytes, over the {max_bytes}-byte limit")
        with open(path, "rb") as f:
            lineno = 0
            while raw := f.readline(max_line + 1):
                lineno += 1
                if len(raw) > max_line:
                    raise FormatError(path, f"line longer than {max_line} bytes", lineno)
                yield _decode(path, raw, lineno).rstrip("\n").rstrip("\r")
    except OSError as err:
        raise FormatError(path, f"cannot read: {err.strerror or err}") from None


def split_text_lines(text: str, path, max_bytes: int) -> list[str]:
    """The lines of text already in memory (`loads`), with the same size limit and line
    endings as `read_text_lines`."""
    if len(text) > max_bytes:
        raise FormatError(path, f"file larger than {max_bytes} bytes")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _decode(path: Path, raw: bytes, lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise FormatError(path, f"invalid UTF-8 byte 0x{raw[err.start]:02x} "
                                f"at column {err.start + 1}", lineno) from None


class CountedLineReader:
    """The frame both param formats share: line 1 is the magic number, line 2 declares two
    counts (checked against what was read when the file ends), then one item per line.
    A subclass names the counted things (`nouns`), reads a line after the header (`body`),
    says how many of each it found (`found_counts`) and what it built (`result`).

    With `collect` None the first problem raises FormatError; with a list, problems are
    gathered and reading goes on (the validator)."""

    magic: str
    nouns: tuple[str, str]
    max_line_chars: int

    def __init__(self, path: str, collect: list[FormatError] | None = None) -> None:
        self.path = path
        self.collect = collect
        self.declared: tuple[int, int] | None = None
        self.lineno = 0

    @classmethod
    def read(cls, lines, path):
        reader = cls(str(path))
        for line in lines:
            reader.feed(line)
        return reader.finish()

    def fail(self, message: str, line: int | None = -1):
        raise FormatError(self.path, message, self.lineno if line == -1 else line)

    def report(self, err: FormatError) -> None:
        if self.collect is None:
            raise err
        self.collect.append(err)

    def feed(self, line: str) -> None:
        self.lineno += 1
        if len(line) > self.max_line_chars:
            self.fail(f"line longer than {self.max_line_chars} bytes")
        try:
            if self.lineno == 1:
                self._magic(line)
            elif self.lineno == 2:
                self._counts(line)
            else:
                self.body(line)
        except FormatError as err:
            self.report(err)

    def _magic(self, line: str) -> None:
        if line.strip() != self.magic:
            self.fail(f"bad magic {line.strip()[:40]!r}, expected {self.magic}")

    def _counts(self, line: str) -> None:
        parts = line.split()
        if len(parts) != 2 or not all(is_digits(p) and len(p) <= 10 for p in parts):
            first, second = self.nouns
            self.fail(f"expected '<{first} count> <{second} count>', got {line.strip()[:60]!r}")
        self.declared = (int(parts[0]), int(parts[1]))

    def finish(self):
        if self.declared is None:
            if self.lineno < 2:
                self.report(FormatError(self.path, f"file ends before the {'/'.join(self.nouns)} count line",
                                        self.lineno))
            return self.result()
        for noun, declared, found in zip(self.nouns, self.declared, self.found_counts()):
            if declared != found:
                self.report(FormatError(self.path, f"header declares {declared} {noun}s but the file has {found}", 2))
        return self.result()

    def body(self, line: str) -> None:
        raise NotImplementedError

    def found_counts(self) -> tuple[int, int]:
        raise NotImplementedError

    def result(self):
        raise NotImplementedError
