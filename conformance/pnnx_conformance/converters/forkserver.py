"""A server for converters whose command line is under test.

A route that tests a command line (`pnnxref model.pt inputshape=...`) must not pay a fresh
interpreter that imports torch and the converter per case (seconds). The server is one
interpreter, started once per harness worker, that imports the command's module (and whatever
`preload` names) and then runs `ENTRY(argv)` per request, in the request's folder, its stdout
and stderr (the file descriptors, so C++ output too) into a file the client names. Two modes:

- `fork=True`: a child is forked per request, so each conversion starts from the server's
  state (globals, caches, warnings filters, registered ops), at the cost of a fork of a warmed
  ~600 MB process (30-55 ms a conversion on this project's 2-core machine, more than most
  smoke conversions themselves).
- `fork=False`: the server runs the requests itself, one after another (10-15 ms a smoke
  conversion). Before each request it puts back what a forked child would have started from
  (random generators, torch's default dtype, grad mode and thread count, warnings filters, the
  working folder). A request that kills the server (a hard exit, a signal) or outlives its
  timeout is that request's result (its exit code, a time-out); the next request starts a new
  server. A server whose memory grew by more than `recycle_mb` since its warm-up says so in its
  reply and exits; the next request starts a new one. What it cannot put back: torch's C++
  warn-once messages show in one conversion per server. On the smoke tier (5,294 conversions of
  the .pt, .pt2 and ONNX routes) both modes wrote the same bytes, random cases aside.

    server = ForkServer("pnnx_reference.cli:main", preload=("pnnx_reference.api",), fork=False)
    done = server.run(["case.pt", "inputshape=[1,3,8,8]"], cwd=workdir, timeout_s=120)
    done.returncode, done.output, done.timed_out

Any CLI route can use it (`reference-pt` does; an ONNX or torch.export route passes its own
argv). The protocol is one JSON line per request on the server's stdin and one per reply on
its stdout. A route may name a warm-up (`warm_up="module:function"`): one throw-away
conversion of a tiny model of its own, run once before the first request, so torch's and the
converter's first-use work (caches, lazy imports, the interpreter's specialised bytecode) is
done once instead of per request; a forking server that has more than one thread after it
starts over without it, since a fork must not copy a process running threads."""
from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

_POLL_S = 0.005


@dataclass
class Completed:
    returncode: int
    output: str
    timed_out: bool = False


class ServerProcess:
    """A long-lived server process in `self._proc` (None until started): stopped by closing its
    stdin, killed if it does not exit within 5 s."""

    _proc: subprocess.Popen | None = None

    def close(self) -> None:
        if self._proc is not None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
            self._proc = None

    def __del__(self) -> None:
        self.close()


class ForkServer(ServerProcess):
    """The client: starts the server on first use. A server found dead before it took a request
    is restarted once; in the serial mode (`fork=False`) one that dies or hangs while running a
    request gives that request's result, and the next request starts a new server."""

    def __init__(self, entry: str, preload: tuple[str, ...] = (), warm_up: str | None = None, *,
                 fork: bool = True, recycle_mb: int = 2048) -> None:
        self.entry, self.preload, self.warm_up = entry, tuple(preload), warm_up
        self.fork, self.recycle_mb = fork, recycle_mb
        self._proc: subprocess.Popen | None = None

    def run(self, argv: list[str], cwd, timeout_s: float) -> Completed:
        with output_file() as output:
            return self._request(argv, cwd, timeout_s, output)

    def _request(self, argv, cwd, timeout_s: float, output: str) -> Completed:
        request = json.dumps({"argv": list(argv), "cwd": str(cwd), "timeout_s": timeout_s, "output": output})
        for attempt in (1, 2):
            proc = self._server()
            try:
                proc.stdin.write(request + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self.close()  # dead before it took the request (killed, out of memory): start a new one
                continue
            line = self._reply_line(proc, None if self.fork else timeout_s)
            if line:
                reply = json.loads(line)
                if reply.get("closing"):
                    self.close()
                return Completed(reply["returncode"], read_output(output), reply["timed_out"])
            if self.fork:
                self.close()  # the server itself died: start a new one once
                continue
            return self._lost(proc, output)
        raise RuntimeError(f"the fork server for {self.entry} stopped answering")

    @staticmethod
    def _reply_line(proc: subprocess.Popen, timeout_s: float | None) -> str:
        """The reply, or "" when the server died (or, with a timeout, did not answer in time)."""
        try:
            if timeout_s is not None and not select.select([proc.stdout], [], [], timeout_s)[0]:
                return ""
            return proc.stdout.readline()
        except (OSError, ValueError):
            return ""

    def _lost(self, proc: subprocess.Popen, output: str) -> Completed:
        """A serial server that died or hung on the request: the request's own result."""
        timed_out = proc.poll() is None
        if timed_out:
            proc.kill()
        returncode = proc.wait()
        self._proc = None
        return Completed(returncode, read_output(output), timed_out)

    def _server(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            options = [*([f"--warm-up={self.warm_up}"] if self.warm_up else []),
                       *([] if self.fork else [f"--serial={self.recycle_mb}"])]
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, *options, self.entry, *self.preload], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        return self._proc


@contextlib.contextmanager
def output_file():
    """The path of an empty file for a request's stdout and stderr (the client makes it, so the
    output survives a server that dies on the request), removed afterwards."""
    fd, path = tempfile.mkstemp(prefix="pnnx-server-", suffix=".out")
    os.close(fd)
    try:
        yield path
    finally:
        os.unlink(path)


def read_output(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")
    except OSError:
        return ""


# --- the server ------------------------------------------------------------------------------
def _resolve(entry: str):
    import importlib

    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def _call(fn, prog: str, argv: list[str]) -> int:
    """ENTRY(argv) as a command's main: its exit code (a traceback is printed and is 1)."""
    try:
        sys.argv = [prog, *argv]
        result = fn(list(argv))
        return result if isinstance(result, int) else 0
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # what a fresh interpreter would print before exiting 1
        import traceback

        traceback.print_exc()
        return 1


def _child(fn, prog: str, argv: list[str], cwd: str, output: str) -> None:
    """In the forked child: never returns."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group, so a timeout kills whatever it started too
        fd = os.open(output, os.O_WRONLY | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(cwd)
        code = _call(fn, prog, argv)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class _StartingState:
    """What a forked child would start from, taken after the warm-up and put back before each
    request of a serial server: random generators, torch's default dtype, grad mode and thread
    count (a conversion that changes one must not change the next one's result)."""

    def __init__(self) -> None:
        import random

        self.random = random.getstate()
        self.numpy = sys.modules["numpy"].random.get_state() if "numpy" in sys.modules else None
        torch = sys.modules.get("torch")
        self.torch = (torch.random.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled(),
                      torch.get_num_threads()) if torch is not None and hasattr(torch, "random") else None

    def restore(self) -> None:
        import random

        random.setstate(self.random)
        if self.numpy is not None:
            sys.modules["numpy"].random.set_state(self.numpy)
        if self.torch is not None:
            import torch

            rng, dtype, grad, threads = self.torch
            torch.random.set_rng_state(rng)
            torch.set_default_dtype(dtype)
            torch.set_grad_enabled(grad)
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)


def _run_here(fn, prog: str, request: dict, start: _StartingState) -> int:
    """One request in the serial server's own process: output into the request's file, then the
    server's descriptors, folder and warnings filters as they were."""
    import warnings

    home = os.getcwd()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(request["output"], os.O_WRONLY | os.O_TRUNC)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.chdir(request["cwd"])
        start.restore()
        with warnings.catch_warnings():  # filters back after; entering makes "once" warnings show again
            return _call(fn, prog, request["argv"])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for d in (fd, *saved):
            os.close(d)
        os.chdir(home)


def _wait(pid: int, timeout_s: float) -> tuple[int, bool]:
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status), True
        time.sleep(_POLL_S)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def serve(entry: str, preload: list[str], warm_up: str | None = None, recycle_mb: int | None = None) -> None:
    """The server's loop; `recycle_mb` None: a forked child per request, else serial."""
    import gc
    import importlib

    for module in preload:
        try:
            importlib.import_module(module)
        except ImportError:  # a warm-up only (a module another torch moved): the child imports what it needs
            pass
    fn = _resolve(entry)
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing else may write into the reply channel
    serial = recycle_mb is not None
    if warm_up:
        # one throw-away conversion (the route's own `warm_up`): torch's and the converter's
        # first-use work is then done once, not per request. A fork must not copy a process
        # that runs threads: should the warm-up have started any, start over without it
        import warnings

        try:
            with warnings.catch_warnings():  # on leaving, warnings shown during the warm-up show again
                _resolve(warm_up)()
        except Exception:
            pass
        if not serial and _threads() != 1:
            sys.stdout.flush()
            os.dup2(replies.fileno(), 1)  # the reply channel back where the new server looks for it
            module = __spec__.name if __spec__ else __name__  # run as `python -m`: __name__ is __main__
            os.execv(sys.executable, [sys.executable, "-m", module, entry, *preload])
    # everything imported and warmed so far goes to the collector's permanent generation: a
    # collection in a child then never walks (and so copies on write) the server's whole heap
    gc.freeze()
    start = _StartingState() if serial else None
    base_mb = _rss_mb()
    for line in sys.stdin:
        request = json.loads(line)
        if serial:
            returncode, timed_out = _run_here(fn, entry, request, start), False
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(fn, entry, request["argv"], request["cwd"], request["output"])
            returncode, timed_out = _wait(pid, float(request["timeout_s"]))
        closing = serial and _rss_mb() - base_mb > recycle_mb
        replies.write(json.dumps({"returncode": returncode, "timed_out": timed_out, "closing": closing}) + "\n")
        if closing:
            return


if __name__ == "__main__":
    _args = sys.argv[1:]
    _warm = _args.pop(0).partition("=")[2] if _args and _args[0].startswith("--warm-up=") else None
    _recycle = int(_args.pop(0).partition("=")[2]) if _args and _args[0].startswith("--serial=") else None
    serve(_args[0], _args[1:], _warm, _recycle)
    # every reply is written and flushed, every request's output file closed: out without the
    # interpreter's teardown (torch's: ~0.4 s of CPU per server, at each recycle and at the end)
    from pnnx_reference.fast_exit import leave

    leave(0)
