"""pnnx.bin: a store-only zip with one entry per attribute (`<op name>.<attr key>`).

`write_bin` produces upstream HEAD's exact layout (zip64 extra field on every entry, no
data descriptor, zeroed times and versions), which upstream's sequential C++ reader and
Python's zipfile both read. `scan_bin` / `read_bin` parse the zip structures directly,
never extract anything, and turn every inconsistency into one FormatError.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, NoReturn

from ..errors import FormatError
from .background_write import open_weights

LOCAL_SIG, CENTRAL_SIG = b"PK\x03\x04", b"PK\x01\x02"
ZIP64_EOCD_SIG, ZIP64_LOCATOR_SIG, EOCD_SIG = b"PK\x06\x06", b"PK\x06\x07", b"PK\x05\x06"
_LOCAL = struct.Struct("<4sHHHHHIIIHH")             # 30 bytes
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")     # 46 bytes
_ZIP64_EXTRA = struct.Struct("<HHQQQI")             # id 1, size 28, usize, csize, offset, disk
_ZIP64_EOCD = struct.Struct("<4sQHHIIQQQQ")         # 56 bytes
_ZIP64_LOCATOR = struct.Struct("<4sIQI")            # 20 bytes
_EOCD = struct.Struct("<4sHHHHIIH")                 # 22 bytes
_U32_MAX, _U16_MAX = 0xFFFFFFFF, 0xFFFF

MAX_ENTRY_BYTES = 1 << 34
MAX_TOTAL_BYTES = 1 << 36
MAX_ENTRIES = 1 << 20
MAX_NAME_BYTES = 4096


# --- writing -------------------------------------------------------------------------
def _zip64_extra(size: int, offset: int) -> bytes:
    return _ZIP64_EXTRA.pack(1, 28, size, size, offset, 0)


def write_bin(path, entries: Iterable[tuple[str, bytes | memoryview]]) -> None:
    """Write entries (name, raw bytes or any bytes-like view of them) in upstream's zip64
    store-only layout, one entry at a time from where its data lives (nothing is copied)."""
    central = []
    with open_weights(path) as f:
        for name, data in entries:
            offset = f.tell()
            name_bytes = name.encode("utf-8")
            data = memoryview(data).cast("B")
            crc = zlib.crc32(data)
            f.write(_LOCAL.pack(LOCAL_SIG, 0, 0, 0, 0, 0, crc, _U32_MAX, _U32_MAX, len(name_bytes), 32))
            f.write(name_bytes + _zip64_extra(len(data), 0))
            f.write(data)
            central.append((name_bytes, crc, len(data), offset))
        cd_offset = f.tell()
        for name_bytes, crc, size, offset in central:
            f.write(_CENTRAL.pack(CENTRAL_SIG, 0, 0, 0, 0, 0, 0, crc, _U32_MAX, _U32_MAX,
                                  len(name_bytes), 32, 0, _U16_MAX, 0, 0, _U32_MAX))
            f.write(name_bytes + _zip64_extra(size, offset))
        eocd64_offset = f.tell()
        count = len(central)
        f.write(_ZIP64_EOCD.pack(ZIP64_EOCD_SIG, 44, 0, 0, 0, 0, count, count,
                                 eocd64_offset - cd_offset, cd_offset))
        f.write(_ZIP64_LOCATOR.pack(ZIP64_LOCATOR_SIG, 0, eocd64_offset, 1))
        f.write(_EOCD.pack(EOCD_SIG, _U16_MAX, _U16_MAX, _U16_MAX, _U16_MAX, _U32_MAX, _U32_MAX, 0))


# --- reading -------------------------------------------------------------------------
@dataclass
class BinEntry:
    name: str
    offset: int       # of the data, not the header
    size: int
    crc: int


class _Scanner:
    """Walks the file from offset 0 like upstream's reader, then checks the central
    directory and end records against what the local headers said."""

    def __init__(self, path: Path, f: BinaryIO, size: int, max_entry: int, max_total: int):
        self.path, self.f, self.size = path, f, size
        self.max_entry, self.max_total = max_entry, max_total
        self.entries: list[BinEntry] = []
        self.by_name: dict[str, BinEntry] = {}
        self.total = 0

    def fail(self, message: str) -> NoReturn:
        raise FormatError(self.path, message)

    def read(self, offset: int, n: int, what: str) -> bytes:
        if offset + n > self.size:
            self.fail(f"truncated: {what} at offset {offset} runs past the end of the file ({self.size} bytes)")
        self.f.seek(offset)
        return self.f.read(n)

    def signature(self, offset: int) -> bytes:
        if offset + 4 > self.size:
            self.fail(f"truncated: file ends at offset {self.size} without an end of central directory")
        return self.read(offset, 4, "signature")

    def run(self) -> list[BinEntry]:
        offset = 0
        while self.signature(offset) == LOCAL_SIG:
            offset = self.local(offset)
        cd_start = offset
        index = 0
        while self.signature(offset) == CENTRAL_SIG:
            offset = self.central(offset, index)
            index += 1
        if index != len(self.entries):
            self.fail(f"central directory lists {index} entries, local headers {len(self.entries)}")
        self.trailer(offset, cd_start)
        return self.entries

    # local headers
    def local(self, offset: int) -> int:
        fields = _LOCAL.unpack(self.read(offset, _LOCAL.size, "local header"))
        _, _, flag, method, _, _, crc, csize, usize, name_len, extra_len = fields
        name = self.name(self.read(offset + 30, name_len, "entry name"), offset)
        extra = self.read(offset + 30 + name_len, extra_len, f"extra field of {name}")
        if flag & 0x8:
            self.fail(f"entry {name} uses a data descriptor (flag bit 3), which upstream rejects")
        if method != 0:
            self.fail(f"entry {name} is compressed (method {method}); pnnx.bin must be store-only")
        usize, csize = self.zip64_sizes(extra, usize, csize, name)
        if csize != usize:
            self.fail(f"entry {name}: compressed size {csize} differs from size {usize}")
        data_offset = offset + 30 + name_len + extra_len
        self.add(BinEntry(name, data_offset, usize, crc))
        return data_offset + usize

    def name(self, raw: bytes, offset: int) -> str:
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"entry name at offset {offset} is not valid UTF-8")
        return check_entry_name(self.path, name)

    def zip64_sizes(self, extra: bytes, usize: int, csize: int, name: str) -> tuple[int, int]:
        if usize != _U32_MAX and csize != _U32_MAX:
            return usize, csize
        body = _find_extra(extra, 1)
        if body is None:
            self.fail(f"entry {name}: sizes are 0xFFFFFFFF but there is no zip64 extra field")
        values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
        if usize == _U32_MAX:
            usize = values.pop(0) if values else self.fail(f"entry {name}: zip64 extra field is too short")
        if csize == _U32_MAX:
            csize = values.pop(0) if values else self.fail(f"entry {name}: zip64 extra field is too short")
        return usize, csize

    def add(self, entry: BinEntry) -> None:
        if entry.name in self.by_name:
            self.fail(f"duplicate entry {entry.name}")
        if len(self.entries) >= MAX_ENTRIES:
            self.fail(f"more than {MAX_ENTRIES} entries")
        if entry.offset + entry.size > self.size:
            self.fail(f"entry {entry.name} declares {entry.size} bytes but only "
                      f"{max(self.size - entry.offset, 0)} remain in the file")
        if entry.size > self.max_entry:
            self.fail(f"entry {entry.name} is {entry.size} bytes, over the {self.max_entry}-byte limit")
        self.total += entry.size
        if self.total > self.max_total:
            self.fail(f"entries total more than the {self.max_total}-byte limit")
        self.entries.append(entry)
        self.by_name[entry.name] = entry

    # central directory
    def central(self, offset: int, index: int) -> int:
        fields = _CENTRAL.unpack(self.read(offset, _CENTRAL.size, "central directory record"))
        flag, method, crc, csize, usize = fields[3], fields[4], fields[7], fields[8], fields[9]
        name_len, extra_len, comment_len = fields[10], fields[11], fields[12]
        raw_name = self.read(offset + 46, name_len, "central directory name")
        extra = self.read(offset + 46 + name_len, extra_len, "central directory extra field")
        self.read(offset + 46 + name_len + extra_len, comment_len, "central directory comment")
        if index >= len(self.entries):
            self.fail(f"central directory lists entry {raw_name[:80]!r} that has no local header")
        entry = self.entries[index]
        usize, csize = self.zip64_sizes(extra, usize, csize, entry.name)
        if raw_name != entry.name.encode("utf-8"):
            self.fail(f"central directory names entry {index} {raw_name[:80]!r}, local header {entry.name}")
        if flag & 0x8 or method != 0:
            self.fail(f"central directory marks entry {entry.name} as compressed or with a data descriptor")
        if (usize, csize, crc) != (entry.size, entry.size, entry.crc):
            self.fail(f"central directory declares {usize} bytes for {entry.name}, "
                      f"local header {entry.size} (or the CRCs differ)")
        return offset + 46 + name_len + extra_len + comment_len

    def trailer(self, offset: int, cd_start: int) -> None:
        sig = self.signature(offset)
        if sig == ZIP64_EOCD_SIG:
            fields = _ZIP64_EOCD.unpack(self.read(offset, _ZIP64_EOCD.size, "zip64 end record"))
            self.check_counts(fields[6], fields[7], fields[9], cd_start, "zip64 end record")
            offset += 12 + fields[1]
            if self.signature(offset) != ZIP64_LOCATOR_SIG:
                self.fail(f"expected the zip64 end locator at offset {offset}")
            offset += _ZIP64_LOCATOR.size
            sig = self.signature(offset)
        if sig != EOCD_SIG:
            self.fail(f"unexpected data at offset {offset} (signature {sig.hex()})")
        fields = _EOCD.unpack(self.read(offset, _EOCD.size, "end of central directory"))
        if fields[4] != _U16_MAX:
            self.check_counts(fields[3], fields[4], fields[6], cd_start, "end of central directory")
        end = offset + _EOCD.size + fields[7]
        if end != self.size:
            self.fail(f"{self.size - end} unexpected bytes after the end of central directory")

    def check_counts(self, on_disk: int, total: int, cd_offset: int, cd_start: int, what: str) -> None:
        if on_disk != len(self.entries):
            self.fail(f"{what} declares {on_disk} entries on this disk, the file has {len(self.entries)}")
        if total != len(self.entries):
            self.fail(f"{what} declares {total} entries, the file has {len(self.entries)}")
        if cd_offset != cd_start:
            self.fail(f"{what} puts the central directory at {cd_offset}, it is at {cd_start}")


def _find_extra(extra: bytes, header_id: int) -> bytes | None:
    pos = 0
    while pos + 4 <= len(extra):
        hid, size = struct.unpack_from("<HH", extra, pos)
        if hid == header_id:
            return extra[pos + 4: pos + 4 + size]
        pos += 4 + size
    return None


def check_entry_name(path, name: str) -> str:
    """Reject names that would be dangerous if anyone ever extracted the zip."""
    if not name:
        raise FormatError(path, "entry with an empty name")
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise FormatError(path, f"entry name longer than {MAX_NAME_BYTES} bytes")
    if "\x00" in name:
        raise FormatError(path, f"entry name {name!r} contains NUL")
    parts = name.replace("\\", "/").split("/")
    if name[0] in "/\\" or (len(name) > 1 and name[1] == ":"):
        raise FormatError(path, f"entry name {name!r} is an absolute path")
    if ".." in parts:
        raise FormatError(path, f"entry name {name!r} contains '..'")
    return name


def _open_scan(path, max_entry_bytes: int, max_total_bytes: int, consume):
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = path.stat().st_size
            entries = _Scanner(path, f, size, max_entry_bytes, max_total_bytes).run()
            return consume(path, f, entries)
    except OSError as err:
        raise FormatError(path, f"cannot read: {err.strerror}") from None


def scan_bin(path, max_entry_bytes: int = MAX_ENTRY_BYTES,
             max_total_bytes: int = MAX_TOTAL_BYTES) -> list[BinEntry]:
    """Entry names, offsets and sizes, checked for consistency, without reading the data."""
    return _open_scan(path, max_entry_bytes, max_total_bytes, lambda p, f, entries: entries)


def _read_entry(path: Path, f: BinaryIO, entry: BinEntry) -> bytes:
    f.seek(entry.offset)
    data = f.read(entry.size)
    if zlib.crc32(data) != entry.crc:
        raise FormatError(path, f"entry {entry.name}: CRC-32 mismatch (corrupt data)")
    return data


def read_bin(path, max_entry_bytes: int = MAX_ENTRY_BYTES,
             max_total_bytes: int = MAX_TOTAL_BYTES) -> dict[str, bytes]:
    """Every entry's bytes by name, in file order. Nothing is written to disk."""
    return _open_scan(path, max_entry_bytes, max_total_bytes,
                      lambda p, f, entries: {e.name: _read_entry(p, f, e) for e in entries})
