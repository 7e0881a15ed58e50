"""Float text formats of upstream pnnx (`float_to_string` / `double_to_string`).

Writing follows upstream HEAD (the round-trip-exact format); `parse_float32` and
`parse_float64` accept every historical era (`%e`, `%.8f`-stripped, `%g`, `%.9g`,
short exponents such as `1.000000e-5`).
"""
from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

_SPECIAL = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _normalise_exponent(text: str) -> str:
    """`1.000000e-05` -> `1.000000e-5`, `1.000000e+06` -> `1.000000e6`."""
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    sign = "-" if exponent.startswith("-") else ""
    digits = exponent.lstrip("+-").lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits}"


def _fraction_digits(text: str) -> int:
    if "." not in text:
        return 0
    return len(text.split(".", 1)[1])


def _special(x: float) -> str | None:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0.0"
    return None


def _format(x: float, roundtrips, short_g: str, long_g: str, long_e: str, max_fraction: int) -> str:
    """Upstream's rule: `%e` outside [1e-4, 1e6), else `%g`, falling back to longer forms
    whenever the short one does not read back to the same value."""
    if abs(x) < 1e-4 or abs(x) >= 1e6:
        text = "%e" % x
        if not roundtrips(text):
            text = long_e % x
        return _normalise_exponent(text)
    text = short_g % x
    if not roundtrips(text):
        text = long_g % x
        if _fraction_digits(text) > max_fraction:
            return _normalise_exponent(long_e % x)
    if not any(c in text for c in ".eE"):
        text += ".0"
    return text


def float_to_string(x: float) -> str:
    """The text upstream HEAD writes for a float32 value (the input is narrowed first)."""
    f = float(np.float32(x))
    special = _special(f)
    if special is not None:
        return special
    return _format(f, lambda t: parse_float32(t) == f, "%g", "%.9g", "%.8e", 9)


def double_to_string(x: float) -> str:
    """The text upstream HEAD writes for a float64 value (17/16-digit variant)."""
    d = float(x)
    special = _special(d)
    if special is not None:
        return special
    return _format(d, lambda t: float(t) == d, "%g", "%.17g", "%.16e", 17)


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# Decimal values at or above this round to infinity in float32 (FLT_MAX + half an ulp).
_F32_OVERFLOW = Fraction(2**128 - 2**103)
_F32_MAX = float(np.finfo(np.float32).max)
_MAX_EXACT_CHARS = 200  # longer texts (never written by pnnx) skip the exact-rounding step


def parse_float64(text: str) -> float:
    """Parse any era's float text (and `inf`, `-inf`, `nan`). Raises ValueError."""
    if text in _SPECIAL:
        return _SPECIAL[text]
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def parse_float32(text: str) -> float:
    """Parse like C `strtof`: one correct rounding from the decimal text to float32
    (a detour through float64 can round twice). Raises ValueError; out-of-range
    magnitudes give +-inf as strtof does."""
    d = parse_float64(text)
    if not math.isfinite(d) or len(text) > _MAX_EXACT_CHARS:
        return float(np.float32(math.copysign(min(abs(d), _F32_MAX), d))) if abs(d) <= _F32_MAX else math.copysign(math.inf, d)
    exact = Fraction(text)
    if abs(exact) >= _F32_OVERFLOW:
        return math.copysign(math.inf, d)
    candidate = np.float32(math.copysign(min(abs(d), _F32_MAX), d))
    if d == float(candidate):
        return float(candidate)
    with np.errstate(over="ignore"):
        neighbours = [c for c in (np.nextafter(candidate, np.float32(-np.inf)), candidate,
                                  np.nextafter(candidate, np.float32(np.inf))) if np.isfinite(c)]
    best = min(neighbours, key=lambda c: (abs(Fraction(float(c)) - exact), _odd_mantissa(c)))
    return float(best)


def _odd_mantissa(value: np.float32) -> int:
    return int(np.array(value, dtype=np.float32).view(np.uint32)) & 1
