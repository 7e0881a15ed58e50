"""Writing a weight file in a second thread, so that converting the next piece (fp16 packing,
a transpose, a checksum) overlaps the kernel copying the last one to disk.

Every weight file (pnnx.bin, ncnn.bin, .pnnx.onnx and its external data) is produced a piece
at a time; written in turn, a piece's conversion and its write add up, and once the page
cache holds as many dirty pages as the kernel allows, each write waits for the disk. Here
the pieces go through a queue bounded in bytes (`MAX_PENDING`) to a thread that writes them
in order; numpy's conversions and the write system call both run without the GIL, so the
two cores do both at once. Pieces must not change once handed over (they are fresh
conversions, or the model's own weights, which nothing writes to while a file is written)."""
from __future__ import annotations

import contextlib
import threading
from collections import deque

MAX_PENDING = 8 << 20    # bytes handed over but not yet written: bounds the extra memory
SMALL = 64 << 10         # pieces below this are gathered into one buffer before handing over


class BackgroundWriter:
    """A write-only file whose `write` returns once the piece is queued. A write error in the
    thread is raised (the same OSError) by the next `write` or by `close`."""

    def __init__(self, f, max_pending: int = MAX_PENDING) -> None:
        self._f, self._max = f, max_pending
        self._queue: deque = deque()
        self._pending = 0           # bytes queued, not yet written
        self._small = bytearray()   # small pieces gathered until SMALL
        self._offset = 0
        self._error: BaseException | None = None
        self._closing = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="pnnxref-writer", daemon=True)
        self._thread.start()

    def tell(self) -> int:
        return self._offset

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        n = view.nbytes
        self._offset += n
        if n < SMALL:
            self._small += view
            if len(self._small) >= SMALL:
                self._hand_over_small()
        else:
            self._hand_over_small()
            self._hand_over(view)
        return n

    def _hand_over_small(self) -> None:
        if self._small:
            self._hand_over(bytes(self._small))
            self._small.clear()

    def writelines(self, pieces) -> None:
        for piece in pieces:
            self.write(piece)

    def _hand_over(self, view) -> None:
        n = memoryview(view).nbytes
        with self._cond:
            while self._error is None and self._pending and self._pending + n > self._max:
                self._cond.wait()
            if self._error is not None:
                raise self._error
            self._queue.append(view)
            self._pending += n
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                view = self._queue.popleft()
            try:
                self._f.write(view)
            except BaseException as err:  # noqa: B036 - handed to the producer, which raises it
                with self._cond:
                    self._error = err
                    self._queue.clear()
                    self._cond.notify_all()
                return
            with self._cond:
                self._pending -= memoryview(view).nbytes
                self._cond.notify_all()

    def close(self) -> None:
        """Write what is left and wait for the thread; raise its error if it had one."""
        if self._error is None:
            self._hand_over_small()
        self._stop()
        if self._error is not None:
            raise self._error

    def abandon(self) -> None:
        """Drop what is queued and wait for the thread (the file is being given up)."""
        with self._cond:
            self._queue.clear()
        self._stop()

    def _stop(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()


@contextlib.contextmanager
def open_weights(path, mode: str = "wb"):
    """`open(path, mode)` whose writes happen in a background thread (see BackgroundWriter).
    Mode "r+b" for a file made empty just before (mkstemp): ext4 starts writing back, on close,
    a file that was truncated on opening, which costs 0.1 s per 300 MB of a page-cache write."""
    with open(path, mode) as f:
        writer = BackgroundWriter(f)
        try:
            yield writer
        except BaseException:
            writer.abandon()
            raise
        writer.close()
