"""Parameter values of pnnx.param: how each Python value kind is written and read back.

Kinds (see ir.py): None, bool, int (int32), float (float32), str (unquoted), lists of
int / float / str / complex, complex. Reading follows upstream's classification
(`%` forces a string, a list's kind comes from its last element, `inf`/`nan` are
strings), with two deliberate differences: `()` reads back as an empty list (upstream:
None) and complex values are parsed (upstream keeps only the real part).
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import ValueTextError
from .floatfmt import float_to_string, parse_float32
from .textfile import is_digits

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_INT = re.compile(r"-?\d+")
_FLOAT_TEXT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_COMPLEX = re.compile(rf"({_FLOAT_TEXT})\+({_FLOAT_TEXT}|[+-]?(?:inf|nan))j")


# --- writing -------------------------------------------------------------------------
def _encode_complex(z: complex) -> str:
    real, imag = (float(np.float32(p)) for p in (z.real, z.imag))
    return "%e+%ej" % (real, imag)


def _encode_int(i: int) -> str:
    if not INT32_MIN <= i <= INT32_MAX:
        raise ValueError(f"integer {i} does not fit in int32")
    return str(i)


def _encode_str(s: str) -> str:
    if any(c.isspace() for c in s):
        raise ValueError(f"string {s!r} contains whitespace and cannot be written")
    return s


def _encode_scalar(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return _encode_int(int(value))
    if isinstance(value, (float, np.floating)):
        return float_to_string(float(value))
    if isinstance(value, (complex, np.complexfloating)):
        return _encode_complex(complex(value))
    if isinstance(value, str):
        return _encode_str(value)
    raise ValueError(f"cannot write a parameter of type {type(value).__name__}")


def _list_kind(values) -> type:
    kinds: set[type] = set()
    for v in values:
        if isinstance(v, (bool, np.bool_)) or v is None:
            raise ValueError(f"a list parameter cannot hold {v!r}")
        if isinstance(v, (int, np.integer)):
            kinds.add(int)
        elif isinstance(v, (float, np.floating)):
            kinds.add(float)
        elif isinstance(v, (complex, np.complexfloating)):
            kinds.add(complex)
        elif isinstance(v, str):
            kinds.add(str)
        else:
            raise ValueError(f"a list parameter cannot hold {type(v).__name__}")
    if kinds <= {int}:
        return int
    if kinds <= {int, float}:
        return float  # a number list with any float is a float list, as in C++
    if len(kinds) == 1:
        return kinds.pop()
    raise ValueError(f"a list parameter mixes kinds: {sorted(k.__name__ for k in kinds)}")


def encode_value(value) -> str:
    """The text written after `key=` for a parameter value."""
    if isinstance(value, (list, tuple)):
        kind = _list_kind(value)
        return "(" + ",".join(_encode_scalar(kind(v)) for v in value) + ")"
    return _encode_scalar(value)


# --- reading -------------------------------------------------------------------------
def _is_numeric(text: str) -> bool:
    return bool(text) and (is_digits(text[0]) or (text[0] == "-" and is_digits(text[1:2])))


def clip(text: str, limit: int = 40) -> str:
    """Shorten hostile values quoted in error messages."""
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} chars)"


def parse_int32(text: str) -> int:
    """A decimal int32; raises ValueTextError. Long digit strings are refused before
    conversion (Python refuses over 4300 digits with its own error)."""
    if not _INT.fullmatch(text):
        raise ValueTextError(f"malformed integer {clip(text)!r}")
    if len(text.lstrip("-")) > 10 or not INT32_MIN <= int(text) <= INT32_MAX:
        raise ValueTextError(f"integer {clip(text)} does not fit in int32")
    return int(text)


def _parse_float(text: str) -> float:
    try:
        value = parse_float32(text)
    except ValueError:
        raise ValueTextError(f"malformed float {clip(text)!r}") from None
    if value in (float("inf"), float("-inf")):
        raise ValueTextError(f"float {clip(text)} does not fit in float32")
    return value


def _parse_complex(match: re.Match) -> complex:
    return complex(parse_float32(match.group(1)), parse_float32(match.group(2)))


def _parse_element(text: str):
    """One scalar (also a list element): complex, float, int or string."""
    if "%" not in text and _is_numeric(text):
        match = _COMPLEX.fullmatch(text)
        if match:
            return _parse_complex(match)
        if "." in text or "e" in text:
            return _parse_float(text)
        return parse_int32(text)
    return text


def _parse_list(text: str) -> list:
    closing = ")" if text[0] == "(" else "]"
    if len(text) < 2 or text[-1] != closing:
        raise ValueTextError(f"list {clip(text)!r} has no closing {closing!r}")
    inner = text[1:-1]
    if inner == "":
        return []
    elements = [_parse_element(t) for t in inner.split(",")]
    kind = type(elements[-1])  # upstream: the last element decides the list's kind
    return [e for e in elements if type(e) is kind]


_KEYWORDS = {"None": None, "True": True, "False": False}


def decode_value(text: str):
    """The Python value of a parameter's text. Raises ValueTextError."""
    if "%" in text:
        return text
    if text in _KEYWORDS:
        return _KEYWORDS[text]
    if text[:1] in ("(", "["):
        return _parse_list(text)
    return _parse_element(text)
