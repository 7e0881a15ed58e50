"""Literal text in upstream's expression grammar (floats as `float_to_string` writes them)."""
from __future__ import annotations

import math

import numpy as np


def _exp_form(text: str) -> str:
    mantissa, exponent = text.split("e")
    sign = "-" if exponent.startswith("-") else ""
    digits = exponent.lstrip("+-").lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits}"


def float_to_string(value: float) -> str:
    f = np.float32(value)
    if math.isinf(f) or math.isnan(f):
        return "inf" if f > 0 else "-inf" if f < 0 else "nan"
    if f == 0:
        return "0.0"
    if abs(f) < 1e-4 or abs(f) >= 1e6:
        text = "%e" % f
        if np.float32(float(text)) != f:
            text = "%.8e" % f
        return _exp_form(text)
    text = "%g" % f
    if np.float32(float(text)) != f:
        text = "%.9g" % f
        if "." in text and "e" not in text and len(text.split(".")[1]) > 9:
            return _exp_form("%.8e" % f)
    if not any(c in text for c in ".eE"):
        text += ".0"
    return text


def literal(value) -> str:
    if isinstance(value, np.generic):  # a numpy scalar (`x * a.max()` with `a` an ndarray)
        value = value.item()
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return float_to_string(value)
    if isinstance(value, complex):
        return f"{float_to_string(value.real)}{'+' if value.imag >= 0 else ''}{float_to_string(value.imag)}j"
    raise TypeError(f"no expression literal for {type(value).__name__}")
