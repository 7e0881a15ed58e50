"""Bounded, streaming line reading for the text formats (hostile files stay cheap)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..errors import FormatError


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
