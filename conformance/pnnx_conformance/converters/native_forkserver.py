"""A fork server for a native command whose command line is under test (upstream `pnnx`).

Upstream `pnnx` links libtorch statically: each start spends ~0.2 s of CPU registering
libtorch's operators before main() even looks at its arguments, twice per case (fp32 and fp16
artefacts). As the Python routes do with `forkserver.py`, the harness starts the command once
per worker and forks it per conversion: `native_forkserver.c`, preloaded (LD_PRELOAD), lets the
program initialise as in any start and then, in place of main, forks a child per request that
runs the program's own main() with the request's arguments, in the case folder, output to a
file, as a fresh process would (same binary, same initialised state, same exit code).

Linux with glibc and a C compiler (`cc`) only: elsewhere, or when the shim cannot be built,
`NativeForkServer.available()` is False and callers start the command per conversion as before;
PNNX_NATIVE_FORKSERVER=0 turns it off.

    server = NativeForkServer("/path/to/pnnx")
    done = server.run(["case.pt", "inputshape=[1,3,8,8]"], cwd=workdir, timeout_s=120)
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .forkserver import Completed, ServerProcess, output_file, read_output

SOURCE = Path(__file__).with_name("native_forkserver.c")
_BUILT: dict[str, Path | None] = {}


def shim() -> Path | None:
    """The compiled shim, or None (built once per machine and source, in the user's cache folder)."""
    if "lib" not in _BUILT:
        _BUILT["lib"] = _build()
    return _BUILT["lib"]


def _build() -> Path | None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not sys.platform.startswith("linux") or compiler is None or os.environ.get("PNNX_NATIVE_FORKSERVER") == "0":
        return None
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pnnx-conformance"
    lib = cache / f"native_forkserver_{digest}.so"
    if lib.is_file():
        return lib
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, suffix=".so.tmp")
        os.close(fd)
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", tmp, str(SOURCE), "-ldl"],
                       check=True, capture_output=True, timeout=60)
        os.replace(tmp, lib)  # atomic: workers building at once all end with the same file
    except (OSError, subprocess.SubprocessError):
        return None
    return lib


class NativeForkServer(ServerProcess):
    """The client: starts the server on first use, restarts it once if it died."""

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self._proc: subprocess.Popen | None = None

    @staticmethod
    def available() -> bool:
        return shim() is not None

    def run(self, argv: list[str], cwd, timeout_s: float) -> Completed:
        with output_file() as output:
            return self._request([str(round(timeout_s * 1000)), str(cwd), output, *map(str, argv)], output)

    def _request(self, fields: list[str], output: str) -> Completed:
        if any(ch in f for f in fields for ch in "\t\n"):
            raise ValueError(f"a tab or a newline in {fields!r}: not a request the server can read")
        for attempt in (1, 2):
            proc = self._server()
            try:
                proc.stdin.write("\t".join(fields) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (BrokenPipeError, OSError):
                line = ""
            if line:
                code, timed_out = (int(x) for x in line.split())
                return Completed(code, read_output(output), bool(timed_out))
            self.close()  # the server died (killed, out of memory): start a new one once
        raise RuntimeError(f"the fork server for {self.exe} stopped answering")

    def _server(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            preload = os.environ.get("LD_PRELOAD", "")
            env = dict(os.environ, LD_PRELOAD=f"{shim()} {preload}".strip(), PNNX_NATIVE_FORKSERVER="1",
                       PNNX_NATIVE_FORKSERVER_LD_PRELOAD=preload)  # the child gets the original back
            self._proc = subprocess.Popen([self.exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        return self._proc
