"""A fork server for a native command whose command line is under test (upstream `pnnx`).

Upstream `pnnx` links libtorch statically: each start spends ~0.2 s of CPU registering
libtorch's operators before main() even looks at its arguments, twice per case (fp32 and fp16
artefacts). As the Python routes do with `forkserver.py`, the harness starts the command once
per worker and forks it per conversion: `native_forkserver.c`, preloaded (LD_PRELOAD), lets the
program initialise as in any start and then, in place of main, forks a child per request that
runs the program's own main() with the request's arguments, in the case folder, output to a
file, as a fresh process would (same binary, same initialised state, same exit code).

A `warm_up` (a function that writes a tiny input into the folder it is given and returns the
arguments that convert it) runs the program's main() once in the server before it forks any
child: upstream pnnx spends most of a small conversion (~0.25 s of ~0.33 s, measured on 100
smoke cases) initialising libtorch's JIT on first use, which every child then inherits done.
On the smoke tier (1,924 conversions) every child's files are byte for byte those of a server
without the warm-up, and its output too but for timestamps and timings, except where upstream
samples a random operator while converting (`torch.randn/shape_of_input`,
`F.gumbel_softmax/soft`, tagged random: no parity is checked on them): the warm-up has moved
libtorch's generator. A warm-up that fails or leaves a thread running makes the server start
over without it, and a server that dies with one is restarted without it.

Linux with glibc and a C compiler (`cc`) only: elsewhere, or when the shim cannot be built,
`NativeForkServer.available()` is False and callers start the command per conversion as before;
PNNX_NATIVE_FORKSERVER=0 turns it off.

    server = NativeForkServer("/path/to/pnnx", warm_up=write_tiny_model)
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
from typing import Callable

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
    """The client: starts the server on first use, restarts it once if it died (without the
    warm-up, which may be what killed it)."""

    def __init__(self, exe: str, warm_up: Callable[[Path], list[str]] | None = None) -> None:
        self.exe = exe
        self.warm_up = warm_up
        self._proc: subprocess.Popen | None = None
        self._folder: tempfile.TemporaryDirectory | None = None

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
            self.warm_up = None
        raise RuntimeError(f"the fork server for {self.exe} stopped answering")

    def _server(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            preload = os.environ.get("LD_PRELOAD", "")
            env = dict(os.environ, LD_PRELOAD=f"{shim()} {preload}".strip(), PNNX_NATIVE_FORKSERVER="1",
                       PNNX_NATIVE_FORKSERVER_LD_PRELOAD=preload)  # the child gets the original back
            env.pop("PNNX_NATIVE_FORKSERVER_WARM_UP", None)
            if self.warm_up is not None:
                env["PNNX_NATIVE_FORKSERVER_WARM_UP"] = self._warm_up_spec()
            self._proc = subprocess.Popen([self.exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        return self._proc

    def _warm_up_spec(self) -> str:
        """The warm-up's folder and arguments, tab-separated (the folder lives until close())."""
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="pnnx-native-warm-up-")
        folder = Path(self._folder.name)
        fields = [str(folder), *map(str, self.warm_up(folder))]
        if any(ch in f for f in fields for ch in "\t\n"):
            raise ValueError(f"a tab or a newline in the warm-up {fields!r}")
        return "\t".join(fields)

    def close(self) -> None:
        super().close()
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
