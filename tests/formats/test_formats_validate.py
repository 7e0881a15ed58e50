"""pnnx-validate: one broken file per rule, with the exact line it must print."""
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from pnnx_reference.formats import ncnn_bin, pnnx_bin
from pnnx_reference.validate import main, validate

PNNX = """7767517
4 3
pnnx.Input               in0                      0 1 0 #0=(1,4)f32
nn.Linear                fc                       1 1 0 1 bias=True in_features=4 out_features=2 @bias=(2)f32 @weight=(2,4)f32 #0=(1,4)f32 #1=(1,2)f32
F.relu                   F.relu_0                 1 1 1 2 $input=1 #1=(1,2)f32 #2=(1,2)f32
pnnx.Output              out0                     1 0 2 #2=(1,2)f32
"""
ENTRIES = [("fc.bias", b"\0" * 8), ("fc.weight", b"\0" * 32)]


def _write_pnnx(tmp_path, text=PNNX, entries=ENTRIES):
    param = tmp_path / "m.pnnx.param"
    param.write_text(text)
    if entries is not None:
        pnnx_bin.write_bin(tmp_path / "m.pnnx.bin", entries)
    return param


def _messages(path):
    return [str(p) for p in validate(path)]


def test_clean_model(tmp_path):
    assert validate(_write_pnnx(tmp_path)) == []
    assert main([str(tmp_path / "m.pnnx.param")]) == 0


PNNX_RULES = [
    ("grammar", PNNX.replace("$input=1", "$input"), None, ["{p}:5: expected key=value, got '$input'"]),
    ("counts", PNNX.replace("4 3", "5 2"), None,
     ["{p}:2: header declares 5 operators but the file has 4", "{p}:2: header declares 2 operands but the file has 3"]),
    ("consumed before produced", PNNX.replace("1 1 1 2 $input=1 #1=(1,2)f32", "1 1 7 2"), None,
     ["{p}:5: operand 7 is used before it is produced"]),
    ("produced twice", PNNX.replace("1 1 1 2 $input=1 #1=(1,2)f32 #2=(1,2)f32", "1 1 1 0 $input=1 #1=(1,2)f32"), None,
     ["{p}:5: operand 0 is produced twice (first on line 3)", "{p}:6: operand 2 is used before it is produced"]),
    ("input shape", PNNX.replace("pnnx.Input               in0                      0 1 0 #0=(1,4)f32",
                                 "pnnx.Input in0 0 2 0 9 #0=(1,4)f32").replace("4 3", "4 4"), None,
     ["{p}:3: pnnx.Input in0 must have 0 inputs and 1 output, has 0 and 2"]),
    ("no output", PNNX.replace("4 3", "3 3").replace("pnnx.Output              out0                     1 0 2 #2=(1,2)f32\n", ""),
     None, ["{p}: graph has no pnnx.Output operator"]),
    ("attr size", PNNX.replace("@bias=(2)f32", "@bias=(3)f32"), None,
     ["{p}:4: @bias of fc: pnnx.bin entry fc.bias has 8 bytes, (3)f32 needs 12"]),
    ("attr missing", PNNX.replace("@bias=(2)f32", "@bias=(2)f32 @scale=(1)f32"), None,
     ["{p}:4: @scale of fc: no entry fc.scale in pnnx.bin"]),
    ("stray entry", PNNX, ENTRIES + [("ghost.data", b"1234")], ["{b}: stray entry ghost.data (no such attribute)"]),
    ("missing bin", PNNX, "none", ["{b}: missing pnnx.bin"]),
    ("bad utf8", PNNX.replace("F.relu_0", "F.relu_\udcff0"), None, ["{p}:5: invalid UTF-8 byte 0xff at column 33"]),
]


@pytest.mark.parametrize("text, entries, expected", [r[1:] for r in PNNX_RULES], ids=[r[0] for r in PNNX_RULES])
def test_pnnx_rule(tmp_path, text, entries, expected):
    param = tmp_path / "m.pnnx.param"
    param.write_bytes(text.encode("utf-8", "surrogateescape"))
    if entries != "none":
        pnnx_bin.write_bin(tmp_path / "m.pnnx.bin", entries or ENTRIES)
    assert _messages(param) == [e.format(p=param, b=tmp_path / "m.pnnx.bin") for e in expected]


def test_compressed_bin_is_reported(tmp_path):
    param = _write_pnnx(tmp_path, entries=None)
    with zipfile.ZipFile(tmp_path / "m.pnnx.bin", "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in ENTRIES:
            z.writestr(name, data)
    assert _messages(param) == [f"{tmp_path / 'm.pnnx.bin'}: entry fc.bias is compressed (method 8); "
                                "pnnx.bin must be store-only"]


def test_corrupt_entry_is_reported(tmp_path):
    param = _write_pnnx(tmp_path)
    raw = bytearray((tmp_path / "m.pnnx.bin").read_bytes())
    raw[30 + 7 + 32] ^= 1  # first data byte of fc.bias
    (tmp_path / "m.pnnx.bin").write_bytes(bytes(raw))
    assert _messages(param) == [f"{tmp_path / 'm.pnnx.bin'}: entry fc.bias: CRC-32 mismatch (corrupt data)"]


NCNN = """7767517
4 5
Input                    in0                      0 1 in0
Convolution              conv_0                   1 1 in0 1 0=2 1=1 5=1 6=8
Split                    splitncnn_0              1 2 1 2 3
BinaryOp                 add_0                    2 1 2 3 out0 0=0
"""


def _write_ncnn(tmp_path, text=NCNN, weights=None):
    param = tmp_path / "m.ncnn.param"
    param.write_text(text)
    if weights is None:
        weights = ncnn_bin.pack_weight(np.ones(8, np.float32), True, True) + ncnn_bin.pack_weight(np.ones(2, np.float32), False, True)
    (tmp_path / "m.ncnn.bin").write_bytes(weights)
    return param


def test_clean_ncnn(tmp_path):
    assert validate(_write_ncnn(tmp_path)) == []


NCNN_RULES = [
    ("counts", NCNN.replace("4 5", "3 4"), ["{p}:2: header declares 3 layers but the file has 4",
                                          "{p}:2: header declares 4 blobs but the file has 5"]),
    ("grammar", NCNN.replace("0=0", "x=0"), ["{p}:6: expected <id>=<value>, got 'x=0'"]),
    ("consumed before produced", NCNN.replace("2 1 2 3 out0", "2 1 2 9 out0").replace("4 5", "4 6"),
     ["{p}:6: blob 9 is used before it is produced"]),
    ("produced twice", NCNN.replace("1 2 1 2 3", "1 2 1 2 1").replace("2 1 2 3 out0", "2 1 2 1 out0").replace("4 5", "4 4"),
     ["{p}:5: blob 1 is produced twice (first on line 4)",
      "{p}:6: blob 1 is consumed by 2 layers (splitncnn_0, add_0); ncnn needs a Split"]),
    ("needs split", NCNN.replace("Split                    splitncnn_0              1 2 1 2 3\n", "")
     .replace("2 1 2 3 out0", "2 1 1 1 out0").replace("4 5", "3 3"),
     ["{p}:5: blob 1 is consumed by 2 layers (add_0, add_0); ncnn needs a Split"]),
    ("input", NCNN.replace("0 1 in0", "0 2 in0 x").replace("4 5", "4 6"),
     ["{p}:3: Input in0 must have 0 inputs and 1 output, has 0 and 2"]),
    ("no such layer type", NCNN.replace("BinaryOp                 add_0", "NoSuchLayer add_0"),
     ["{p}:6: layer add_0: ncnn has no layer type 'NoSuchLayer' (its loader refuses the file)"]),
    ("python code as a type", NCNN.replace("BinaryOp                 add_0", "torch.add(x,y) add_0"),
     ["{p}:6: layer add_0: ncnn has no layer type 'torch.add(x,y)' (its loader refuses the file)"]),
    # issue 33 item 13: ncnn's loader takes inf and nan for strings and refuses -inf; 0=nan was "does not fit"
    *[(f"non-finite {v}", NCNN.replace("0=0", f"0={v}"), [f"{{p}}:6: param 0: {m}"]) for v, m in (
        ("inf", "'inf' is no number ncnn reads (its loader takes it for a string): ncnn.param has no infinity or NaN"),
        ("nan", "'nan' is no number ncnn reads (its loader takes it for a string): ncnn.param has no infinity or NaN"),
        ("-inf", "'-inf' is no number ncnn reads: ncnn.param has no infinity or NaN"))],
    ("registered but not built", NCNN.replace("BinaryOp                 add_0", "ArgMax add_0"),
     ["{p}:6: layer add_0: ncnn has no layer type 'ArgMax' (its loader refuses the file)"]),
]


@pytest.mark.parametrize("text, expected", [r[1:] for r in NCNN_RULES], ids=[r[0] for r in NCNN_RULES])
def test_ncnn_rule(tmp_path, text, expected):
    param = _write_ncnn(tmp_path, text)
    assert _messages(param) == [e.format(p=param) for e in expected]


def test_ncnn_bin_size(tmp_path):
    param = _write_ncnn(tmp_path, weights=b"\0" * 36)
    assert _messages(param) == [f"{tmp_path / 'm.ncnn.bin'}: layer conv_0 needs 8 bytes at offset 36 but ncnn.bin has only 0 left"]
    (tmp_path / "m.ncnn.bin").unlink()
    assert _messages(param) == [f"{tmp_path / 'm.ncnn.bin'}: missing ncnn.bin"]


def test_cli_prints_every_problem_and_exit_codes(tmp_path, capsys):
    ncnn = _write_ncnn(tmp_path)
    param = _write_pnnx(tmp_path, PNNX.replace("4 3", "5 2"))
    assert main([str(ncnn), str(param)]) == 1
    out, err = capsys.readouterr()
    assert out == f"{ncnn}: ok\n"  # the clean file is said to be clean
    assert err.splitlines() == [
        f"{param}:2: header declares 5 operators but the file has 4",
        f"{param}:2: header declares 2 operands but the file has 3"]
    assert main([str(tmp_path / "x.onnx")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'x.onnx'}: expected a file ending in .pnnx.param or .ncnn.param\n"
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2


def test_console_script_installed(tmp_path):
    param = _write_pnnx(tmp_path)
    exe = os.path.join(os.path.dirname(sys.executable), "pnnx-validate")
    done = subprocess.run([exe, str(param)], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{param}: ok\n", "")  # issue 33 item 13: not silent


def test_validator_goes_on_after_a_bad_line(tmp_path):
    text = PNNX.replace("F.relu_0                 1 1 1 2 $input=1", "fc 1 1 1 2 k=99999999999 $input=1")
    param = _write_pnnx(tmp_path, text)
    assert _messages(param) == [f"{param}:5: duplicate operator name fc (first on line 4)",
                                f"{param}:5: parameter k: integer 99999999999 does not fit in int32"]


@pytest.mark.parametrize("layer, pads, dynamic", [
    ("Deconvolution", "18=1 19=1", "28=1"),  # 19 is output_pad_bottom for deconvolutions
    ("Convolution", "", "19=1"),
])
def test_ncnn_conv_weights_by_layer_kind(tmp_path, layer, pads, dynamic):
    """The dynamic-weight flag (weights fed as an input blob) is 19 on convolutions and 28 on
    deconvolutions: an output-padded deconvolution still reads its weights from ncnn.bin."""
    line = f"{layer:<24} conv_0                   1 1 in0 out0 0=2 1=1 5=0 6=4 {pads}"
    text = f"7767517\n2 2\nInput                    in0                      0 1 in0\n{line}\n"
    weights = ncnn_bin.pack_weight(np.ones(4, np.float32), True, True)
    assert validate(_write_ncnn(tmp_path, text, weights)) == []
    dynamic_text = text.replace("6=4", f"6=4 {dynamic}").replace("1 1 in0 out0", "2 1 in0 w out0")
    dynamic_text = dynamic_text.replace("2 2\n", "3 3\n").replace(
        "0 1 in0\n", "0 1 in0\nInput                    w                        0 1 w\n")
    assert validate(_write_ncnn(tmp_path, dynamic_text, b"")) == []
