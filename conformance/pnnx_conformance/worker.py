"""Isolation: units run in a spawned worker process with a time and a memory limit.

The parent sends one unit at a time and waits at most `timeout_s` for its result. A worker
that dies (signal, abort) gives `crash`, one that runs out of address space `oom`, one that
does not answer in time is killed and gives `timeout`; each record carries the tail of the
worker's output, and a fresh worker takes the next unit.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import re
import signal
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .results import Result
from .stages import last_marked
from .units import Unit

OOM_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")
TAIL_CHARS = 3000


@dataclass(frozen=True)
class WorkerConfig:
    workroot: str
    tier: str = "smoke"
    cases_provider: str | None = None
    timeout_s: float = 120.0
    memory_mb: int = 12288      # RLIMIT_AS: torch alone maps ~4 GB of address space
    startup_timeout_s: float = 180.0


def _limit_memory(memory_mb: int) -> None:
    import resource

    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker if the harness dies, so none is left running."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _worker_main(conn, config: WorkerConfig, log_path: str) -> None:
    _die_with_parent()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    import faulthandler

    faulthandler.enable()  # a segfault leaves a Python stack in the log tail
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _limit_memory(config.memory_mb)
    from .cases import use_provider
    from .checks import Executor
    from .stages import enable_marks

    use_provider(config.cases_provider)
    enable_marks()
    import torch  # noqa: F401  (warm-up outside any unit's time limit)

    executor = Executor(Path(config.workroot), config.tier)
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except EOFError:  # the parent is gone
            break
        if msg[0] == "stop":
            break
        result = executor.execute(Unit(**msg[1]))
        conn.send(("result", asdict(result)))
        if result.status == "oom":  # the heap may be in a bad state: start afresh
            break
    executor.close()
    # every result is sent and the converters' servers are stopped: out without the
    # interpreter's teardown (torch's: ~0.4 s of CPU per worker)
    from pnnx_reference.fast_exit import leave

    leave(0)


def _tail(log_path: str, offset: int) -> str:
    try:
        with open(log_path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return ""
    return data.decode(errors="replace")[-TAIL_CHARS:]


def _stable(tail: str) -> str:
    """Thread ids and addresses change from run to run; results must not."""
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x?", tail)


def _died_status(exitcode: int | None, tail: str) -> tuple[str, str]:
    if any(m in tail for m in OOM_MARKERS) or exitcode == -signal.SIGKILL:
        return "oom", f"worker ran out of memory (exit code {exitcode})"
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        return "crash", f"worker killed by {name}"
    return "crash", f"worker exited with code {exitcode}"


class Worker:
    """The parent's handle on one worker process; restarts it after a crash or timeout."""

    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.proc = None
        self.log_path = tempfile.mkstemp(prefix="pnnx-conformance-worker-", suffix=".log")[1]

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.config, self.log_path), daemon=True)
        self.proc.start()
        child.close()
        if not self.conn.poll(self.config.startup_timeout_s):
            raise RuntimeError(f"worker did not start in {self.config.startup_timeout_s} s: "
                               f"{_tail(self.log_path, 0)[-500:]}")
        try:
            self.conn.recv()
        except EOFError:
            raise RuntimeError(f"worker died while starting: {_tail(self.log_path, 0)[-1000:]}") from None

    def _kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.join(10)
        self.proc = None

    def run(self, unit: Unit) -> Result:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        offset = os.path.getsize(self.log_path)
        start = time.perf_counter()
        self.conn.send(("run", unit.to_dict()))
        try:
            if self.conn.poll(self.config.timeout_s):
                kind, payload = self.conn.recv()
                result = Result.from_dict(payload)
                if result.status == "oom":
                    self._kill()
                return result
            status, error = "timeout", f"no result in {self.config.timeout_s:g} s; worker killed"
            self._kill()
        except (EOFError, ConnectionError, OSError):
            self.proc.join(5)
            status, error = _died_status(self.proc.exitcode, _tail(self.log_path, offset))
            self._kill()
        tail = _tail(self.log_path, offset)
        return Result(case=unit.case, op="", table="", converter=unit.converter, check=unit.check,
                      status=status, backend=unit.backend, precision=unit.precision, error=error,
                      detail=_stable(tail), tier=self.config.tier, time_s=round(time.perf_counter() - start, 4),
                      stage=last_marked(tail) if unit.check == "parity" else "")

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(("stop",))
                self.proc.join(10)
            except (OSError, EOFError):
                pass
        self._kill()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass
