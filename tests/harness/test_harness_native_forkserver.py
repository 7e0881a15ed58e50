"""The fork server for a native command (converters/native_forkserver.py): the program's own
main() per request, in a forked child, as a fresh process would run it. Upstream pnnx's
conversions through it are byte for byte those of a process of its own."""
from __future__ import annotations

import filecmp
import shutil
import subprocess

import pytest

from pnnx_conformance.converters import native_forkserver
from pnnx_conformance.converters.case_files import inputshape_arg
from pnnx_conformance.converters.native_forkserver import NativeForkServer
from pnnx_conformance.converters.upstream import UpstreamConverter, pnnx_command
from pnnx_conformance.errors import ConvertFailed
from pnnx_op_cases.registry import select

pytestmark = pytest.mark.skipif(not NativeForkServer.available(), reason="needs Linux, glibc and a C compiler")
SH = shutil.which("sh")


@pytest.fixture
def sh():
    server = NativeForkServer(SH)
    yield server
    server.close()


def test_each_request_runs_main_in_a_fresh_child_in_its_folder(sh, tmp_path):
    (tmp_path / "a").mkdir()
    done = sh.run(["-c", 'pwd; echo "$0" >&2; echo "[$LD_PRELOAD$PNNX_NATIVE_FORKSERVER]"; exit 3', "x y"],
                  tmp_path / "a", 10)
    assert (done.returncode, done.timed_out) == (3, False)
    assert done.output.splitlines() == [str(tmp_path / "a"), "x y", "[]"]  # stderr too; the preload is gone
    first = sh._proc.pid
    assert sh.run(["-c", "exit 0"], tmp_path, 10).returncode == 0 and sh._proc.pid == first  # one server


PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
static void at_exit(void) { FILE *f = fopen("atexit.txt", "w"); fputs("ran", f); fclose(f); }
int main(int argc, char **argv) {
    atexit(at_exit);
    FILE *f = fopen("file.txt", "w");
    fputs(argv[1], f);                  /* never closed or flushed by the program */
    printf("%s, no newline", argv[1]);  /* stdout is a file: fully buffered */
    return 4;
}
"""


def test_main_returns_with_stdio_flushed_and_without_exit_handlers(tmp_path):
    """The child ends as main's return would for what it wrote (every stdio stream flushed, its
    return code), but without the program's exit handlers and static destructors: upstream's
    are libtorch's (~80 ms a conversion) and write nothing."""
    (tmp_path / "prog.c").write_text(PROGRAM)
    subprocess.run(["cc", "-o", str(tmp_path / "prog"), str(tmp_path / "prog.c")], check=True)
    server = NativeForkServer(str(tmp_path / "prog"))
    try:
        done = server.run(["data"], tmp_path, 10)
    finally:
        server.close()
    assert (done.returncode, done.output) == (4, "data, no newline")
    assert (tmp_path / "file.txt").read_text() == "data" and not (tmp_path / "atexit.txt").exists()


COUNTING = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int calls;  /* what a warm-up leaves for the children */
static void *idle(void *arg) { (void)arg; for (;;) pause(); return NULL; }
int main(int argc, char **argv) {
    calls++;
    const char *how = argc > 1 ? argv[1] : "";
    if (strcmp(how, "thread") == 0) { pthread_t t; pthread_create(&t, NULL, idle, NULL); }
    if (strcmp(how, "fail") == 0) return 1;
    if (strcmp(how, "die") == 0) abort();
    FILE *f = fopen("ran.txt", "a");
    fputs(how, f);
    fclose(f);
    printf("%d", calls);
    return 0;
}
"""


@pytest.fixture(scope="module")
def counting(tmp_path_factory):
    """A program that prints how many times main() ran in its process."""
    folder = tmp_path_factory.mktemp("counting")
    (folder / "prog.c").write_text(COUNTING)
    subprocess.run(["cc", "-pthread", "-o", str(folder / "prog"), str(folder / "prog.c")], check=True)
    return str(folder / "prog")


def _first_output(exe: str, warm_up, tmp_path) -> tuple[str, NativeForkServer]:
    server = NativeForkServer(exe, warm_up)
    try:
        return server.run(["x"], tmp_path, 10).output, server
    finally:
        server.close()


def test_a_warm_up_runs_main_once_in_the_server_and_every_child_starts_from_it(counting, tmp_path):
    folders = []

    def warm_up(folder):
        folders.append(folder)
        return ["warm"]

    server = NativeForkServer(counting, warm_up)
    try:
        outputs = [server.run(["x"], tmp_path, 10).output for _ in range(3)]
        assert (folders[0] / "ran.txt").read_text() == "warm"  # in its own folder
    finally:
        server.close()
    assert outputs == ["2", "2", "2"] and not folders[0].exists()  # the folder goes with the server
    assert (tmp_path / "ran.txt").read_text() == "xxx"
    assert _first_output(counting, None, tmp_path)[0] == "1"


@pytest.mark.parametrize("how", ["thread", "fail"])
def test_a_warm_up_that_fails_or_leaves_a_thread_is_undone(counting, tmp_path, how):
    """A fork copies only the calling thread, and a failed main may leave any state: the server
    starts over as a fresh process without the warm-up."""
    assert _first_output(counting, lambda folder: [how], tmp_path)[0] == "1"


def test_a_server_that_dies_in_its_warm_up_is_restarted_without_it(counting, tmp_path):
    output, server = _first_output(counting, lambda folder: ["die"], tmp_path)
    assert output == "1" and server.warm_up is None


def test_a_child_past_its_time_is_killed_with_what_it_started(sh, tmp_path):
    done = sh.run(["-c", "sleep 30 & sleep 30"], tmp_path, 0.3)
    assert done.timed_out and done.returncode == -9
    assert sh.run(["-c", "echo alive"], tmp_path, 10).output == "alive\n"


def test_a_killed_server_is_restarted(sh, tmp_path):
    sh.run(["-c", "true"], tmp_path, 10)
    sh._proc.kill()
    sh._proc.wait()
    assert sh.run(["-c", "echo again"], tmp_path, 10).output == "again\n"


def test_it_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("PNNX_NATIVE_FORKSERVER", "0")
    monkeypatch.setattr(native_forkserver, "_BUILT", {})
    assert not NativeForkServer.available()


@pytest.mark.upstream
def test_upstream_through_the_server_writes_what_a_process_of_its_own_writes(tmp_path):
    case = select(pattern="nn.Conv2d/*")[0]
    forked, plain = UpstreamConverter(), UpstreamConverter()
    plain._server = None
    try:
        a = forked.convert(case, tmp_path / "forked")
        b = plain.convert(case, tmp_path / "plain")
    finally:
        forked.close()
    assert forked._server is not None and forked._server.warm_up is not None and a.log == b.log
    assert a.paths.keys() == b.paths.keys() and "ncnn.bin" in a.paths
    for kind, path in b.paths.items():
        assert filecmp.cmp(a.paths[kind], path, shallow=False), kind
    exe = pnnx_command()
    direct = subprocess.run([exe, "missing.pt"], cwd=tmp_path, capture_output=True, text=True)
    server = NativeForkServer(exe)
    try:
        done = server.run(["missing.pt"], tmp_path, 60)
    finally:
        server.close()
    assert done.returncode == direct.returncode != 0
    assert sorted(done.output.splitlines()) == sorted((direct.stdout + direct.stderr).splitlines())
    with pytest.raises(ConvertFailed, match="did not finish in 0.001 s"):  # a conversion: tens of ms
        forked.command(exe, ["case.pt", inputshape_arg(case)], tmp_path / "forked", 0.001)
    forked.close()
