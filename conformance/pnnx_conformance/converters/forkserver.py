"""A fork server for converters whose command line is under test.

A route that tests a command line (`pnnxref model.pt inputshape=...`) needs each conversion
in a fresh process, but a fresh interpreter that imports torch and the converter costs
seconds per case. The server is one interpreter, started once per harness worker, that
imports the command's module (and whatever `preload` names) and then forks a child per
conversion. The child changes into the case folder, points its stdout and stderr at a file,
calls `ENTRY(argv)` and exits with its return value: a fresh process for the conversion's
state (globals, caches, warnings filters, registered ops), at the cost of a fork.

    server = ForkServer("pnnx_reference.cli:main", preload=("pnnx_reference.api",))
    done = server.run(["case.pt", "inputshape=[1,3,8,8]"], cwd=workdir, timeout_s=120)
    done.returncode, done.output, done.timed_out

Any CLI route can use it (`reference-pt` does; an ONNX or torch.export route passes its own
argv). The protocol is one JSON line per request on the server's stdin and one per reply on
its stdout. The server runs none of the requests itself. A route may name a warm-up (`warm_up=
"module:function"`): one throw-away conversion of a tiny model of its own, run before the first
fork, so torch's and the converter's first-use work (caches, lazy imports, the interpreter's
specialised bytecode) is done once instead of in every child; a server that has more than one
thread after it starts over without it, since a fork must not copy a process running threads."""
from __future__ import annotations

import json
import os
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
    """The client: starts the server on first use, restarts it once if it died."""

    def __init__(self, entry: str, preload: tuple[str, ...] = (), warm_up: str | None = None) -> None:
        self.entry, self.preload, self.warm_up = entry, tuple(preload), warm_up
        self._proc: subprocess.Popen | None = None

    def run(self, argv: list[str], cwd, timeout_s: float) -> Completed:
        request = json.dumps({"argv": list(argv), "cwd": str(cwd), "timeout_s": timeout_s})
        for attempt in (1, 2):
            proc = self._server()
            try:
                proc.stdin.write(request + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                reply = json.loads(line)
                return Completed(reply["returncode"], reply["output"], reply["timed_out"])
            self.close()  # the server died (killed, out of memory): start a new one once
        raise RuntimeError(f"the fork server for {self.entry} stopped answering")

    def _server(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, *([f"--warm-up={self.warm_up}"] if self.warm_up else []),
                 self.entry, *self.preload], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        return self._proc



# --- the server ------------------------------------------------------------------------------
def _resolve(entry: str):
    import importlib

    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def _child(fn, prog: str, argv: list[str], cwd: str, output_fd: int) -> None:
    """In the forked child: never returns."""
    code = 1
    try:
        os.setpgid(0, 0)  # its own group, so a timeout kills whatever it started too
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.chdir(cwd)
        sys.argv = [prog, *argv]
        result = fn(list(argv))
        code = result if isinstance(result, int) else 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # what a fresh interpreter would print before exiting 1
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


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


def serve(entry: str, preload: list[str], warm_up: str | None = None) -> None:
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
    if warm_up:
        # one throw-away conversion (the route's own `warm_up`): torch's and the converter's
        # first-use work is then done once, not in every child. A fork must not copy a process
        # that runs threads: should the warm-up have started any, start over without it
        import warnings

        try:
            with warnings.catch_warnings():  # on leaving, warnings shown during the warm-up show again
                _resolve(warm_up)()
        except Exception:
            pass
        if _threads() != 1:
            sys.stdout.flush()
            os.dup2(replies.fileno(), 1)  # the reply channel back where the new server looks for it
            module = __spec__.name if __spec__ else __name__  # run as `python -m`: __name__ is __main__
            os.execv(sys.executable, [sys.executable, "-m", module, entry, *preload])
    # everything imported and warmed so far goes to the collector's permanent generation: a
    # collection in a child then never walks (and so copies on write) the server's whole heap
    gc.freeze()
    for line in sys.stdin:
        request = json.loads(line)
        with tempfile.TemporaryFile() as output:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(fn, entry, request["argv"], request["cwd"], output.fileno())
            returncode, timed_out = _wait(pid, float(request["timeout_s"]))
            output.seek(0)
            text = output.read().decode(errors="replace")
        replies.write(json.dumps({"returncode": returncode, "output": text, "timed_out": timed_out}) + "\n")


if __name__ == "__main__":
    _args = sys.argv[1:]
    _warm = _args.pop(0).partition("=")[2] if _args and _args[0].startswith("--warm-up=") else None
    serve(_args[0], _args[1:], _warm)
