"""Hostile input: each gets one clear FormatError line, fast, with bounded memory, and
nothing is ever written."""
import os
import time
import tracemalloc

import pytest

from pnnx_reference.errors import FormatError
from pnnx_reference.formats import ncnn_param, pnnx_bin, pnnx_param
from pnnx_reference.validate import validate
from pnnx_reference.ir import Graph

GIB = 1 << 30


def _error(fn, *args) -> str:
    with pytest.raises(FormatError) as err:
        fn(*args)
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize("loader, suffix", [(pnnx_param.load_text, ".pnnx.param"), (ncnn_param.load, ".ncnn.param")])
def test_gigabyte_param_file_is_refused_before_reading(tmp_path, loader, suffix):
    path = tmp_path / f"huge{suffix}"
    with open(path, "wb") as f:
        f.truncate(GIB)  # sparse: costs no disk and no time
    start = time.monotonic()
    assert _error(loader, path) == f"{path}: file is {GIB} bytes, over the 268435456-byte limit"
    assert time.monotonic() - start < 1


def test_gigabyte_file_through_the_validator(tmp_path):
    path = tmp_path / "huge.pnnx.param"
    with open(path, "wb") as f:
        f.truncate(GIB)
    assert [str(p) for p in validate(path)] == [f"{path}: file is {GIB} bytes, over the 268435456-byte limit"]


def test_endless_line_is_cut_with_bounded_memory(tmp_path):
    path = tmp_path / "long.pnnx.param"
    with open(path, "wb") as f:
        f.write(b"7767517\n1 1\npnnx.Input in0 0 1 x k=")
        f.write(b"9" * (20 << 20))
    tracemalloc.start()
    message = _error(pnnx_param.load_text, path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert message == f"{path}:3: line longer than {16 << 20} bytes"
    assert peak < 40 << 20


def test_absurd_counts_allocate_nothing():
    text = "7767517\n4294967295 4294967295\npnnx.Input in0 0 1 x\n"
    assert _error(pnnx_param.loads, text) == "<string>:2: header declares 4294967295 operators but the file has 1"
    text = "7767517\n1 1\nF.x y 999999999 1 x\n"
    assert _error(pnnx_param.loads, text) == "<string>:3: operator y declares 999999999 inputs and 1 outputs but lists 1 names"


@pytest.mark.parametrize("value, message", [
    ("9" * 5000, "integer " + "9" * 40 + "...(5000 chars) does not fit in int32"),
    ("1e99999", "float 1e99999 does not fit in float32"),
    ("1" * 5000 + ".5", "float " + "1" * 40 + "...(5002 chars) does not fit in float32"),
    ("(" + "1," * 100000 + "99999999999)", "integer 99999999999 does not fit in int32"),
])
def test_huge_numbers(value, message):
    assert _error(pnnx_param.loads, f"7767517\n1 1\npnnx.Input in0 0 1 x k={value}\n") == f"<string>:3: parameter k: {message}"


def test_huge_dimension():
    text = "7767517\n1 1\npnnx.Input in0 0 1 x @w=(99999999999999999999999,1)f32\n"
    assert _error(pnnx_param.loads, text) == "<string>:3: attribute @w: bad dimension '99999999999999999999999'"


def test_non_utf8_bytes(tmp_path):
    path = tmp_path / "bad.pnnx.param"
    path.write_bytes(b"7767517\n1 1\npnnx.Input in\xff\xfe 0 1 x\n")
    assert _error(pnnx_param.load_text, path) == f"{path}:3: invalid UTF-8 byte 0xff at column 14"
    path = tmp_path / "bad.ncnn.param"
    path.write_bytes(b"7767517\n1 1\nInput \xc3 0 1 x\n")
    assert _error(ncnn_param.load, path) == f"{path}:3: invalid UTF-8 byte 0xc3 at column 7"


def test_binary_garbage(tmp_path):
    path = tmp_path / "garbage.pnnx.param"
    path.write_bytes(os.urandom(4096).replace(b"\n", b"x"))
    assert _error(pnnx_param.load_text, path).startswith(f"{path}:1: ")


def test_truncated_param_files():
    full = "7767517\n2 2\npnnx.Input in0 0 1 x #x=(1,2)f32\npnnx.Output out0 1 0 x #x=(1,2)f32\n"
    for cut in range(len(full)):
        if full[:cut].endswith("\n") and full[:cut].count("\n") == 4:
            continue
        assert _error(pnnx_param.loads, full[:cut]).startswith("<string>:")


@pytest.mark.parametrize("name", ["a b", "a\nb", "a\tb", ""])
def test_names_with_spaces_or_newlines_are_never_written(name):
    g = Graph()
    g.connect(g.new_operator("pnnx.Input", name), outputs=[g.new_operand("x")])
    with pytest.raises(ValueError, match="empty or contains whitespace"):
        pnnx_param.dumps(g)
    g = Graph()
    g.connect(g.new_operator("pnnx.Input", "in0"), outputs=[g.new_operand(name)])
    with pytest.raises(ValueError, match="empty or contains whitespace"):
        pnnx_param.dumps(g)


def test_names_with_spaces_in_a_file_shift_the_fields():
    assert _error(pnnx_param.loads, "7767517\n1 1\npnnx.Input my op 0 1 x\n") == "<string>:3: bad input count 'op'"


def test_zip_hostility_never_writes(tmp_path):
    path = tmp_path / "evil.pnnx.bin"
    pnnx_bin.write_bin(path, [("../../evil", b"x" * 8), ("/abs", b"y")])
    before = sorted(os.listdir(tmp_path))
    assert _error(pnnx_bin.read_bin, path) == f"{path}: entry name '../../evil' contains '..'"
    assert sorted(os.listdir(tmp_path)) == before
    assert not (tmp_path.parent.parent / "evil").exists()


def test_zip_bomb_is_refused_without_allocating(tmp_path):
    path = tmp_path / "bomb.pnnx.bin"
    pnnx_bin.write_bin(path, [("a.data", b"x" * 16)])
    raw = bytearray(path.read_bytes())
    raw[30 + 6 + 4: 30 + 6 + 20] = (1 << 60).to_bytes(8, "little") * 2
    path.write_bytes(bytes(raw))
    tracemalloc.start()
    message = _error(pnnx_bin.read_bin, path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    remain = path.stat().st_size - (30 + 6 + 32)
    assert message == f"{path}: entry a.data declares {1 << 60} bytes but only {remain} remain in the file"
    assert peak < 1 << 20


def test_sparse_gigabyte_bin_is_refused_quickly(tmp_path):
    path = tmp_path / "big.pnnx.bin"
    with open(path, "wb") as f:
        f.truncate(GIB)
    start = time.monotonic()
    assert _error(pnnx_bin.read_bin, path) == f"{path}: unexpected data at offset 0 (signature 00000000)"
    assert time.monotonic() - start < 1
