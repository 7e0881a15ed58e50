"""Weight files written by a second thread (formats/background_write.py): the same bytes in
the same order as plain writes, bounded memory in flight, and a write error surfaces in the
caller as the OSError it was."""
from __future__ import annotations

import errno
import sys
import threading
import time

import numpy as np
import pytest

from pnnx_reference.formats import background_write, ncnn_bin
from pnnx_reference.formats.background_write import BackgroundWriter, open_weights


def _pieces(seed: int = 0):
    """Pieces of every size class: tiny (gathered), just under and over SMALL, large."""
    rng = np.random.default_rng(seed)
    sizes = [1, 3, 4096, background_write.SMALL - 1, background_write.SMALL, 5, 3 << 20, 17, 1 << 20, 2]
    return [rng.integers(0, 256, n, dtype=np.uint8) for n in sizes]


def test_same_bytes_in_order_as_plain_writes(tmp_path):
    pieces = _pieces()
    with open_weights(tmp_path / "w.bin") as f:
        offsets = []
        for piece in pieces:
            offsets.append(f.tell())
            f.write(memoryview(piece))
        f.writelines([b"tail", bytearray(b"!")])
    expected = b"".join(p.tobytes() for p in pieces) + b"tail!"
    assert (tmp_path / "w.bin").read_bytes() == expected
    assert offsets == list(np.cumsum([0] + [p.nbytes for p in pieces[:-1]]))


def test_typed_views_are_written_as_their_bytes(tmp_path):
    weights = np.arange(100_000, dtype=np.float32)
    with open_weights(tmp_path / "w.bin") as f:
        f.write(memoryview(weights))
        f.write(weights[:3])
    assert (tmp_path / "w.bin").read_bytes() == weights.tobytes() + weights[:3].tobytes()


class _SlowFile:
    """Records, at each write, how many bytes the producer had handed over but not yet seen written."""

    def __init__(self, produced: list[int]) -> None:
        self.produced, self.written, self.ahead = produced, 0, []

    def write(self, data) -> int:
        time.sleep(0.002)
        self.ahead.append(self.produced[0] - self.written)
        self.written += memoryview(data).nbytes
        return memoryview(data).nbytes


def test_bytes_in_flight_are_bounded():
    produced = [0]
    slow = _SlowFile(produced)
    piece, limit = 256 << 10, 1 << 20
    writer = BackgroundWriter(slow, max_pending=limit)
    for _ in range(40):
        writer.write(bytes(piece))
        produced[0] += piece
    writer.close()
    assert slow.written == 40 * piece
    assert max(slow.ahead) <= limit + piece  # the queue's bound, and the piece being handed over
    assert max(slow.ahead) >= 2 * piece      # and the producer did run ahead of the writes


class _FullDisk:
    def __init__(self, room: int) -> None:
        self.room = room

    def write(self, data) -> int:
        n = memoryview(data).nbytes
        if n > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= n
        return n


def test_write_error_reaches_the_caller_as_that_oserror():
    writer = BackgroundWriter(_FullDisk(room=1 << 20), max_pending=1 << 20)
    with pytest.raises(OSError) as err:
        for _ in range(64):
            writer.write(bytes(256 << 10))
        writer.close()
    assert err.value.errno == errno.ENOSPC
    assert not writer._thread.is_alive()


def test_error_of_the_last_piece_is_raised_by_close():
    writer = BackgroundWriter(_FullDisk(room=10), max_pending=1 << 20)
    writer.write(b"0123456789abcdef")  # gathered (small): reaches the file on close
    with pytest.raises(OSError, match="No space"):
        writer.close()


def test_producer_error_stops_the_thread(tmp_path):
    before = threading.active_count()
    with pytest.raises(ValueError, match="bad weight"):
        with open_weights(tmp_path / "w.bin") as f:
            f.write(bytes(1 << 20))
            raise ValueError("bad weight")
    assert threading.active_count() == before


def test_fp16_packing_same_bits_with_and_without_torch(monkeypatch):
    """The torch cast (used when torch is loaded) and numpy's give the same upstream bits for
    every class of float32: random bit patterns cover NaNs, infinities, subnormals and ties."""
    import torch  # noqa: F401 - loaded, so fp16_round_half_away takes torch's cast

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, ncnn_bin.BLOCK_ELEMENTS + 12_345, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    with_torch = ncnn_bin.fp16_round_half_away(values)
    monkeypatch.delitem(sys.modules, "torch")
    assert np.array_equal(ncnn_bin.fp16_round_half_away(values), with_torch)
