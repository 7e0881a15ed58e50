"""ncnn.param text and ncnn.bin weight blobs."""
import struct

import numpy as np
import pytest
from profiles import examples
from hypothesis import given, settings, strategies as st

from pnnx_reference.errors import FormatError
from pnnx_reference.formats import ncnn_bin, ncnn_param
from pnnx_reference.formats.ncnn_param import NcnnLayer, NcnnModel

MODEL = NcnnModel([
    NcnnLayer("Input", "in0", [], ["in0"]),
    NcnnLayer("Convolution", "conv_0", ["in0"], ["1"],
              {0: 8, 1: 3, 11: 3, 2: 1, 5: 1, 6: 216, 10: [0.0, 6.0], 9: 3}),
    NcnnLayer("Reshape", "reshape_0", ["1"], ["2"], {6: "*(0h,0w),2,1", 0: -1, 3: [1, 2], 4: "abc_1"}),
    NcnnLayer("LayerNorm", "ln_0", ["2"], ["out0"], {0: 16, 1: 1e-5, 2: 1}),
])
TEXT = """7767517
4 4
Input                    in0                      0 1 in0
Convolution              conv_0                   1 1 in0 1 0=8 1=3 -23310=2,0.0,6.0 11=3 2=1 5=1 6=216 9=3
Reshape                  reshape_0                1 1 1 2 0=-1 -23303=2,1,2 4=abc_1 6="*(0h,0w),2,1"
LayerNorm                ln_0                     1 1 2 out0 0=16 1=1.000000e-5 2=1
"""


def test_dumps_exact():
    assert ncnn_param.dumps(MODEL) == TEXT


def test_loads_round_trip():
    model = ncnn_param.loads(TEXT)
    assert ncnn_param.dumps(model) == TEXT
    assert model.layers[1].params[10] == [0.0, 6.0]
    assert model.layers[2].params[6] == "*(0h,0w),2,1"
    assert model.layers[3].params[1] == pytest.approx(1e-5)


def test_modern_comma_array_form_is_accepted():
    model = ncnn_param.loads("7767517\n1 1\nInput in0 0 1 in0 0=1,2,3\n")
    assert model.layers[0].params[0] == [1, 2, 3]


def _one(body: str, counts="2 2") -> str:
    return f"7767517\n{counts}\nInput in0 0 1 in0\n{body}\n"


ERRORS = [
    ("magic", "7767516\n0 0\n", "<string>:1: bad magic '7767516', expected 7767517"),
    ("counts", "7767517\nx 1\n", "<string>:2: expected '<layer count> <blob count>', got 'x 1'"),
    ("layer count", _one("ReLU r 1 1 in0 a", "5 2"), "<string>:2: header declares 5 layers but the file has 2"),
    ("blob count", _one("ReLU r 1 1 in0 a", "2 9"), "<string>:2: header declares 9 blobs but the file has 2"),
    ("fields", _one("ReLU r 1"), "<string>:4: expected '<type> <name> <inputs> <outputs>', got 3 fields"),
    ("count", _one("ReLU r 1 x in0 a"), "<string>:4: bad output count 'x'"),
    ("names", _one("ReLU r 3 1 in0 a"), "<string>:4: layer r declares 3 inputs and 1 outputs but lists 2 names"),
    ("param form", _one("ReLU r 1 1 in0 a slope=1"), "<string>:4: expected <id>=<value>, got 'slope=1'"),
    ("param id", _one("ReLU r 1 1 in0 a 32=1"), "<string>:4: param id 32 is outside 0..31"),
    ("array id", _one("ReLU r 1 1 in0 a -23340=1,1"), "<string>:4: param id -23340 is outside 0..31"),
    ("dup id", _one("ReLU r 1 1 in0 a 0=1 -23300=1,1"), "<string>:4: duplicate param id 0"),
    ("array count", _one("ReLU r 1 1 in0 a -23300=3,1,2"), "<string>:4: param -23300: array declares 3 elements but has 2"),
    ("int32", _one("ReLU r 1 1 in0 a 0=99999999999"), "<string>:4: param 0: integer 99999999999 does not fit in int32"),
    ("float", _one("ReLU r 1 1 in0 a 0=1e50"), "<string>:4: param 0: float 1e50 does not fit in float32"),
    ("garbage", _one("ReLU r 1 1 in0 a 0=1.2.3"), "<string>:4: param 0: not a number: '1.2.3'"),
    ("quote", _one('ReLU r 1 1 in0 a 0="abc'), "<string>:4: param 0: unterminated string '\"abc'"),
    ("long string", _one('ReLU r 1 1 in0 a 0="' + "x" * 256 + '"'), "<string>:4: param 0: string longer than 255 characters"),
]


@pytest.mark.parametrize("text, message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_each_rule_has_its_exact_error(text, message):
    with pytest.raises(FormatError) as err:
        ncnn_param.loads(text)
    assert str(err.value) == message


def test_dumps_rejects_what_ncnn_cannot_read():
    with pytest.raises(ValueError, match="outside 0..31"):
        ncnn_param.dumps(NcnnModel([NcnnLayer("X", "x", [], ["a"], {40: 1})]))
    with pytest.raises(ValueError, match="whitespace"):
        ncnn_param.dumps(NcnnModel([NcnnLayer("X", "x y", [], ["a"])]))


# --- ncnn.bin --------------------------------------------------------------------------
# Expected halves measured on the upstream pnnx binary's own ncnn.bin (see the upstream test).
FP16_VECTORS = [
    (1 + 2**-11, 0x3C01), (1 + 3 * 2**-11, 0x3C02), (-(1 + 2**-11), 0xBC01), (65520.0, 0x7C00),
    (65519.0, 0x7BFF), (65504.0, 0x7BFF), (2**-14 * (1 - 2**-12), 0), (2**-15, 0), (1e-8, 0),
    (float("nan"), 0x7E00), (float("inf"), 0x7C00), (-float("inf"), 0xFC00), (1 + 2**-12, 0x3C00),
    (2**-14, 0x0400), (70000.0, 0x7C00), (0.0, 0), (-0.0, 0x8000), (1e-45, 0), (1.0, 0x3C00),
]


def test_fp16_conversion_matches_upstream_bits():
    values = np.array([v for v, _ in FP16_VECTORS], np.float32)
    assert [hex(h) for h in ncnn_bin.fp16_round_half_away(values)] == [hex(h) for _, h in FP16_VECTORS]


@settings(max_examples=examples(200), deadline=None)
@given(st.floats(width=32, min_value=-60000, max_value=60000).filter(lambda v: abs(v) >= 2**-14 or v == 0))
def test_fp16_is_within_half_ulp_for_normal_range(value):
    half = ncnn_bin.fp16_round_half_away(np.array([value], np.float32)).view(np.float16)[0]
    assert abs(float(half) - value) <= abs(value) * 2**-11 + 1e-12


def test_pack_weight_tags_and_padding():
    w = np.array([1.0, 2.0, 3.0], np.float32)
    assert ncnn_bin.pack_weight(w, tagged=True, fp16=True) == struct.pack("<I3HH", 0x01306B47, 0x3C00, 0x4000, 0x4200, 0x2283)
    assert ncnn_bin.pack_weight(w, tagged=True, fp16=False) == struct.pack("<I3f", 0, 1.0, 2.0, 3.0)
    assert ncnn_bin.pack_weight(w, tagged=False, fp16=True) == struct.pack("<3f", 1.0, 2.0, 3.0)
    assert ncnn_bin.pack_weight(np.array([1, 2, 3], np.uint8), tagged=False, fp16=True) == b"\x01\x02\x03\x00"
    assert ncnn_bin.pack_weight(np.array([2**40], np.int64), tagged=False, fp16=False) == struct.pack("<i", 2**31 - 1)


def _conv_model(bias: bool):
    return [NcnnLayer("Input", "in0", [], ["in0"]),
            NcnnLayer("Convolution", "c", ["in0"], ["1"], {0: 2, 5: int(bias), 6: 3}),
            NcnnLayer("ReLU", "r", ["1"], ["2"])]


def test_walk_bin_accepts_exact_sizes():
    w = np.ones(3, np.float32)
    data = ncnn_bin.pack_weight(w, True, True) + ncnn_bin.pack_weight(np.ones(2, np.float32), False, True)
    result = ncnn_bin.walk_bin(data, _conv_model(True))
    assert result.problems == [] and result.complete and result.consumed == len(data)
    data32 = ncnn_bin.pack_weight(w, True, False)
    assert ncnn_bin.walk_bin(data32, _conv_model(False)).problems == []


def test_walk_bin_reports_short_long_and_bad_tag():
    data = ncnn_bin.pack_weight(np.ones(3, np.float32), True, True)
    assert ncnn_bin.walk_bin(data, _conv_model(True)).problems[0][1] == \
        "layer c needs 8 bytes at offset 12 but ncnn.bin has only 0 left"
    assert ncnn_bin.walk_bin(data + b"\0" * 8, _conv_model(False)).problems[0][1] == \
        "ncnn.bin has 8 bytes after the last layer's weights"
    assert ncnn_bin.walk_bin(b"\x01\x02\x03\x04" + data, _conv_model(False)).problems[0][1] == \
        "layer c: unsupported weight tag 0x04030201 at offset 0"


def test_walk_bin_stops_at_unknown_layers():
    layers = [NcnnLayer("MyCustomOp", "x", [], ["a"])]
    result = ncnn_bin.walk_bin(b"1234", layers)
    assert not result.complete and result.problems == []


_ID = st.integers(0, 31)
_NCNN_VALUE = st.one_of(
    st.integers(-(2**31), 2**31 - 1), st.floats(width=32, allow_nan=False, allow_infinity=False),
    st.lists(st.integers(-(2**31), 2**31 - 1), max_size=4),
    st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=4),
    st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True).filter(lambda s: s not in ("inf", "nan")),
    st.from_regex(r'[0-9*(),+ -]{1,12}', fullmatch=True),
)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.dictionaries(_ID, _NCNN_VALUE, max_size=5), min_size=1, max_size=4))
def test_property_ncnn_dumps_loads_dumps(param_sets):
    layers = [NcnnLayer("Input", "in0", [], ["b0"])]
    for i, params in enumerate(param_sets):
        layers.append(NcnnLayer("Custom", f"l{i}", [f"b{i}"], [f"b{i + 1}"], params))
    text = ncnn_param.dumps(NcnnModel(layers))
    loaded = ncnn_param.loads(text)
    assert ncnn_param.dumps(loaded) == text
    for layer, back in zip(layers, loaded.layers):
        assert back.params.keys() == layer.params.keys()
        for key, value in layer.params.items():
            expected = [float(np.float32(v)) for v in value] if isinstance(value, list) and any(
                isinstance(v, float) for v in value) else value
            if isinstance(value, float):
                expected = float(np.float32(value))
            assert back.params[key] == expected
