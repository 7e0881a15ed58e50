"""pnnx.bin: upstream's exact zip64 store-only layout, and hostile zips (never extracted)."""
import io
import os
import struct
import zipfile
import zlib

import pytest
from profiles import examples
from hypothesis import given, settings, strategies as st

from pnnx_reference.errors import FormatError
from pnnx_reference.formats import pnnx_bin

ENTRIES = [("conv.weight", bytes(range(36))), ("conv.bias", b"\x01\x02\x03\x04"), ("empty.data", b"")]


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "m.pnnx.bin"
    pnnx_bin.write_bin(path, ENTRIES)
    return path


def test_layout_is_upstreams_zip64(good):
    raw = good.read_bytes()
    sig, ver, flag, method, time, date, crc, csize, usize, nlen, xlen = struct.unpack_from("<4sHHHHHIIIHH", raw)
    assert (sig, ver, flag, method, time, date) == (b"PK\x03\x04", 0, 0, 0, 0, 0)
    assert (crc, csize, usize, nlen, xlen) == (zlib.crc32(ENTRIES[0][1]), 0xFFFFFFFF, 0xFFFFFFFF, 11, 32)
    assert raw[30:41] == b"conv.weight"
    assert struct.unpack_from("<HHQQQI", raw, 41) == (1, 28, 36, 36, 0, 0)
    assert raw[73:109] == ENTRIES[0][1]
    assert raw.endswith(b"PK\x05\x06" + b"\xff" * 16 + b"\x00\x00")
    assert raw[-42:-38] == b"PK\x06\x07" and raw[-98:-94] == b"PK\x06\x06"


def test_python_zipfile_reads_it(good):
    with zipfile.ZipFile(good) as z:
        assert z.testzip() is None
        assert [(i.filename, z.read(i)) for i in z.infolist()] == ENTRIES


def test_read_bin_round_trip(good):
    assert list(pnnx_bin.read_bin(good).items()) == ENTRIES


def test_reads_zip32_written_by_python_and_old_upstream(tmp_path):
    path = tmp_path / "old.pnnx.bin"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in ENTRIES:
            z.writestr(name, data)
    assert list(pnnx_bin.read_bin(path).items()) == ENTRIES


def _fails(path, message, **kw):
    with pytest.raises(FormatError) as err:
        pnnx_bin.read_bin(path, **kw)
    assert str(err.value) == f"{path}: {message}"


def test_compressed_entry(tmp_path):
    path = tmp_path / "c.bin"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.w", b"x" * 100)
    _fails(path, "entry a.w is compressed (method 8); pnnx.bin must be store-only")


def test_data_descriptor(tmp_path):
    buf = io.BytesIO()

    class Unseekable(io.RawIOBase):
        def writable(self): return True
        def write(self, b): return buf.write(b)

    with zipfile.ZipFile(Unseekable(), "w", zipfile.ZIP_STORED) as z:
        with z.open("a.w", "w") as f:
            f.write(b"abcd")
    path = tmp_path / "d.bin"
    path.write_bytes(buf.getvalue())
    _fails(path, "entry a.w uses a data descriptor (flag bit 3), which upstream rejects")


def _patch(path, offset, fmt, value):
    raw = bytearray(path.read_bytes())
    struct.pack_into(fmt, raw, offset, value)
    path.write_bytes(bytes(raw))


def test_zip_bomb_declared_size_far_from_real(good):
    _patch(good, 45, "<Q", 1 << 40)  # usize in the first local zip64 extra
    _patch(good, 53, "<Q", 1 << 40)
    _fails(good, f"entry conv.weight declares {1 << 40} bytes but only {good.stat().st_size - 73} remain in the file")


def test_central_directory_disagrees_with_local_header(good):
    raw = good.read_bytes()
    cd = raw.index(b"PK\x01\x02")
    _patch(good, cd + 46 + 11 + 4, "<Q", 999)
    _fails(good, "central directory declares 999 bytes for conv.weight, local header 36 (or the CRCs differ)")


def test_sizes_differ(good):
    _patch(good, 53, "<Q", 35)
    _fails(good, "entry conv.weight: compressed size 35 differs from size 36")


def test_crc_mismatch(good):
    raw = bytearray(good.read_bytes())
    raw[73] ^= 0xFF
    good.write_bytes(bytes(raw))
    _fails(good, "entry conv.weight: CRC-32 mismatch (corrupt data)")


@pytest.mark.parametrize("name, message", [
    ("../evil", "entry name '../evil' contains '..'"),
    ("a/../../evil", "entry name 'a/../../evil' contains '..'"),
    ("/etc/passwd", "entry name '/etc/passwd' is an absolute path"),
    ("C:\\x", "entry name 'C:\\\\x' is an absolute path"),
    ("a\x00b", "entry name 'a\\x00b' contains NUL"),
    ("", "entry with an empty name"),
])
def test_dangerous_names(tmp_path, name, message):
    path = tmp_path / "n.bin"
    pnnx_bin.write_bin(path, [(name, b"1234")])
    _fails(path, message)


def test_duplicate_entries(tmp_path):
    path = tmp_path / "dup.bin"
    pnnx_bin.write_bin(path, [("a.w", b"1234"), ("a.w", b"5678")])
    _fails(path, "duplicate entry a.w")


def test_absurd_entry_count(good):
    raw = good.read_bytes()
    _patch(good, raw.index(b"PK\x06\x06") + 24, "<Q", 2**63)
    _fails(good, f"zip64 end record declares {2**63} entries on this disk, the file has 3")


def test_absurd_total_count(good):
    raw = good.read_bytes()
    _patch(good, raw.index(b"PK\x06\x06") + 32, "<Q", 2**63)
    _fails(good, f"zip64 end record declares {2**63} entries, the file has 3")


def test_trailing_garbage(good):
    with open(good, "ab") as f:
        f.write(b"junk")
    _fails(good, "4 unexpected bytes after the end of central directory")


def test_limits(good):
    _fails(good, "entry conv.weight is 36 bytes, over the 10-byte limit", max_entry_bytes=10)
    _fails(good, "entries total more than the 38-byte limit", max_total_bytes=38)


def test_not_a_zip(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(b"7767517\n")
    _fails(path, "unexpected data at offset 0 (signature 37373637)")
    path.write_bytes(b"")
    _fails(path, "truncated: file ends at offset 0 without an end of central directory")


def test_missing_file(tmp_path):
    _fails(tmp_path / "nope.bin", "cannot read: No such file or directory")


def _reference_bytes() -> bytes:
    buf = io.BytesIO()
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.bin")
        pnnx_bin.write_bin(path, ENTRIES)
        with open(path, "rb") as f:
            buf.write(f.read())
    return buf.getvalue()


_FULL = _reference_bytes()


def test_every_truncation_is_one_clear_error(tmp_path):
    path = tmp_path / "t.bin"
    for cut in range(len(_FULL)):
        path.write_bytes(_FULL[:cut])
        with pytest.raises(FormatError) as err:
            pnnx_bin.read_bin(path)
        assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value), cut


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, len(_FULL) - 1), st.integers(1, 255))
def test_any_byte_flip_is_detected_or_harmless(tmp_path_factory, pos, xor):
    raw = bytearray(_FULL)
    raw[pos] ^= xor
    path = tmp_path_factory.mktemp("flip") / "f.bin"
    path.write_bytes(bytes(raw))
    try:
        entries = pnnx_bin.read_bin(path)
    except FormatError as err:
        assert "\n" not in str(err)
    else:  # only fields nobody checks (times, versions, disk numbers) may change silently
        assert list(entries.items()) == ENTRIES
