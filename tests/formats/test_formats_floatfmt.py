"""float_to_string / double_to_string (upstream HEAD) and parsing of every float era."""
import ctypes
import math
import struct

import numpy as np
import pytest
from profiles import examples
from hypothesis import given, settings, strategies as st

from pnnx_reference.formats.floatfmt import (double_to_string, float_to_string, parse_float32,
                                             parse_float64)

_libc = ctypes.CDLL(None)
_libc.strtof.restype = ctypes.c_float
_libc.strtof.argtypes = [ctypes.c_char_p, ctypes.c_void_p]


@pytest.mark.parametrize("value, text", [
    (1e-5, "1.000000e-5"), (0.001, "0.001"), (0.1, "0.1"), (1.0, "1.0"),
    (3.14159265, "3.14159274"), (1 / 3, "0.333333343"), (1e6, "1.000000e6"),
    (9.5e-5, "9.500000e-5"), (3.4028234663852886e38, "3.40282347e38"), (0.0, "0.0"),
    (-2.5, "-2.5"), (100.0, "100.0"), (123456.7, "123456.703"), (1e-4, "1.000000e-4"),
    (0.0001234567, "1.23456703e-4"), (16777217.0, "1.67772160e7"),
    (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan"),
])
def test_float_to_string_head_format(value, text):
    assert float_to_string(value) == text


@pytest.mark.parametrize("value, text", [
    (0.1, "0.1"), (1 / 3, "0.33333333333333331"), (1e-7, "1.000000e-7"), (2.0, "2.0"),
    (0.0, "0.0"), (1e20, "1.000000e20"),
])
def test_double_to_string(value, text):
    assert double_to_string(value) == text


@pytest.mark.parametrize("text, value", [
    ("1.000000e-05", 1e-5), ("1.000000e+00", 1.0), ("5.000000e-01", 0.5),  # %e era
    ("0.10000000", 0.1), ("0.5", 0.5), ("1.0", 1.0),                       # %.8f / %g eras
    ("1.000000e-5", 1e-5), ("3.40282347e38", 3.4028234663852886e38),       # HEAD
    ("-2.5", -2.5), ("2", 2.0),
])
def test_parse_every_era(text, value):
    assert parse_float32(text) == float(np.float32(value))


@pytest.mark.parametrize("text", ["", "1..0", "1e", "0x10", "1_000", " 1.0", "infinity", "1.0f"])
def test_parse_rejects_malformed(text):
    with pytest.raises(ValueError):
        parse_float32(text)
    with pytest.raises(ValueError):
        parse_float64(text)


def test_parse_overflow_and_underflow_like_strtof():
    assert parse_float32("3.5e38") == math.inf
    assert parse_float32("-1e39") == -math.inf
    assert parse_float32("1e-50") == 0.0


@settings(max_examples=examples(400), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_float_to_string_round_trips_every_float32(bits):
    value = struct.unpack("<f", struct.pack("<I", bits))[0]
    text = float_to_string(value)
    if math.isnan(value):
        assert text == "nan"
    elif value == 0:
        assert text == "0.0"
    else:
        assert parse_float32(text) == value


@settings(max_examples=examples(300), deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_to_string_round_trips(value):
    text = double_to_string(value)
    assert value == 0 or parse_float64(text) == value


_decimal = st.builds(
    lambda mant, frac, exp: f"{mant}.{frac}e{exp}",
    st.integers(0, 10**9), st.integers(0, 10**12), st.integers(-50, 40))


@settings(max_examples=examples(400), deadline=None)
@given(_decimal)
def test_parse_float32_matches_libc_strtof(text):
    expected = _libc.strtof(text.encode(), None)
    assert parse_float32(text) == expected
