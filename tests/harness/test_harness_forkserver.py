"""The fork server behind command-line routes (converters/forkserver.py) and the reference-pt
converter that uses it."""
import os
import shutil
import time
import pytest
import torch

from pnnx_conformance.converters import BUILTIN, DEFAULT, load_converter
from pnnx_conformance.converters.forkserver import ForkServer
from pnnx_conformance.converters.reference_pt import ReferencePtConverter
from pnnx_conformance.errors import ConvertFailed, NotSupported
from pnnx_op_cases.registry import select

ENTRY = "forkserver_entries:main"


@pytest.fixture
def server(tmp_path, monkeypatch):
    entries = tmp_path / "forkserver_entries.py"
    entries.write_text(
        "import os, sys, time\n"
        "STATE = []\n"
        "def main(argv):\n"
        "    STATE.append(argv)\n"
        "    if argv[0] == 'sleep':\n"
        "        time.sleep(30)\n"
        "    if argv[0] == 'crash':\n"
        "        raise RuntimeError('boom')\n"
        "    if argv[0] == 'die':\n"
        "        os._exit(7)\n"
        "    if argv[0] == 'draw':\n"
        "        import random, warnings\n"
        "        warnings.warn('once per location')\n"
        "        os.chdir('/')\n"
        "        print('drew', random.random())\n"
        "    if argv[0] == 'grow':\n"
        "        STATE.append(bytearray(int(argv[1]) << 20))\n"
        "        return 0\n"
        "    print('cwd', os.getcwd(), 'argv', argv, 'seen', len(STATE))\n"
        "    print('to stderr', file=sys.stderr)\n"
        "    return int(argv[1]) if len(argv) > 1 else 0\n"
        "def warm():\n"
        "    import warnings\n"
        "    STATE.append('warm')\n"
        "    print('warm-up output goes nowhere')\n"
        "    warnings.warn('shown in the warm-up')\n"
        "def warm_with_a_thread():\n"
        "    import threading\n"
        "    STATE.append('warm')\n"
        "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n")
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    srv = ForkServer(ENTRY)
    yield srv
    srv.close()


@pytest.fixture
def serial(server):
    """The same entries, run by a server that does not fork (the CLI routes' mode)."""
    srv = ForkServer(ENTRY, fork=False)
    yield srv
    srv.close()


def test_a_child_per_call_in_the_folder_asked_for(server, tmp_path):
    work = tmp_path / "case"
    work.mkdir()
    first = server.run(["a", "3"], work, 20)
    second = server.run(["b"], work, 20)
    assert (first.returncode, second.returncode) == (3, 0)
    assert f"cwd {work}" in first.output and "to stderr" in first.output
    assert "seen 1" in first.output and "seen 1" in second.output  # a fresh child: no state carried over


def test_a_traceback_exits_1_and_a_hard_exit_keeps_its_code(server, tmp_path):
    crashed = server.run(["crash"], tmp_path, 20)
    assert crashed.returncode == 1 and "RuntimeError: boom" in crashed.output
    assert server.run(["die"], tmp_path, 20).returncode == 7


def test_a_timeout_kills_the_child_and_the_server_goes_on(server, tmp_path):
    start = time.monotonic()
    done = server.run(["sleep"], tmp_path, 1)
    assert done.timed_out and time.monotonic() - start < 20
    assert server.run(["ok"], tmp_path, 20).returncode == 0


def test_a_dead_server_is_restarted(server, tmp_path):
    server.run(["ok"], tmp_path, 20)
    server._proc.kill()
    server._proc.wait()
    assert server.run(["ok"], tmp_path, 20).returncode == 0


def test_reference_pt_is_a_default_route():
    assert "reference-pt" in BUILTIN and DEFAULT.index("reference-pt") < DEFAULT.index("upstream")
    assert isinstance(load_converter("reference-pt"), ReferencePtConverter)


def _case(case_id):
    return next(c for c in select(tier="smoke") if c.id == case_id)


# the tests below share one converter of each route (each one server process that imports torch):
# one worker runs them all (tox.ini's --dist loadgroup)
ROUTES = pytest.mark.xdist_group("forkserver_routes")


@pytest.fixture(scope="module")
def reference_pt():
    converter = ReferencePtConverter()
    yield converter
    converter.close()


@pytest.fixture(scope="module")
def reference_onnx():
    converter = load_converter("reference-onnx")
    yield converter
    converter.close()


@ROUTES
def test_reference_pt_writes_upstreams_file_names_from_case_pt(tmp_path, reference_pt):
    converter = reference_pt
    arts = converter.convert(_case("nn.Conv2d/k3_s2_p1"), tmp_path)
    assert {p.name for p in arts.paths.values()} == {
        "case.pnnx.param", "case.pnnx.bin", "case_pnnx.py", "case.pnnx.onnx", "case.ncnn.param", "case.ncnn.bin",
        "case_ncnn.py"}
    assert (tmp_path / "case.pt").is_file() and "FLOPS = " in arts.log


@ROUTES
def test_reference_pt_reports_declined_emitters_and_errors(tmp_path, reference_pt):
    converter = reference_pt
    arts = converter.convert(_case("torch.quantize_per_tensor/quint8_int_repr"), tmp_path / "q")
    assert "ncnn" in arts.unsupported and "no ncnn lowering" in arts.unsupported["ncnn"]
    with pytest.raises((ConvertFailed, NotSupported)):
        broken = _case("nn.Conv2d/k3_s2_p1")
        converter.convert(broken, tmp_path / "bad", broken.make_model(), [torch.rand(1, 5, 8, 8)])


def test_reference_onnx_is_a_default_route_on_the_fork_server(tmp_path):
    """One server for every conversion of the route: a case costs a fork, not an interpreter."""
    assert DEFAULT.index("reference-pt") < DEFAULT.index("reference-onnx") < DEFAULT.index("upstream")
    converter = load_converter("reference-onnx")
    assert converter.in_process
    arts = converter.convert(_case("nn.Conv2d/k3_s2_p1"), tmp_path / "pt")
    server = converter._server._proc.pid
    onnx_case = next(c for c in select(tier="smoke") if "onnx" in c.tags)
    converter.convert(onnx_case, tmp_path / "onnx")
    assert converter._server._proc.pid == server
    assert (tmp_path / "pt" / "case.onnx").is_file() and arts.paths["pnnx.param"].name == "case.pnnx.param"
    assert "pnnxparam: " in arts.log  # the child's output comes back


@ROUTES
def test_reference_onnx_reports_the_error_line_of_a_bad_file(tmp_path, reference_onnx):
    converter = reference_onnx
    broken = _case("nn.Conv2d/k3_s2_p1")
    with pytest.raises(NotSupported, match="torch.onnx.export"):
        converter.convert(broken, tmp_path / "bad", broken.make_model(), [torch.rand(1, 5, 8, 8)])


@pytest.mark.parametrize("case_id, why", [
    ("nn.AvgPool1d/k2-nobatch", "the ONNX checker refuses"),  # a pool of a rank-2 tensor
    ("nn.AdaptiveAvgPool1d/o1-nobatch", "onnxruntime cannot run"),
    ("nn.AdaptiveAvgPool3d/o1-nobatch", "that computes something else"),  # pools over the channels
    ("torch.floor_divide/same_r4", "that computes something else"),  # truncates
    ("nn.PairwiseDistance/p2-nobatch", "that computes something else")])  # keeps a dim
@ROUTES
def test_reference_onnx_calls_what_torch_onnx_exports_wrongly_unsupported(tmp_path, case_id, why, reference_onnx):
    """The exporter's failures are not the frontend's: the matrix shows them as unsupported."""
    with pytest.raises(NotSupported, match=f"torch.onnx.export wrote a file {why}"):
        reference_onnx.convert(_case(case_id), tmp_path)


@pytest.mark.parametrize("warm_up, seen", [("warm", 2), ("warm_with_a_thread", 1)])
def test_a_warm_up_runs_once_before_the_forks_unless_it_leaves_threads(server, tmp_path, warm_up, seen):
    warmed = ForkServer(ENTRY, warm_up=f"forkserver_entries:{warm_up}")
    try:
        first, second = warmed.run(["a"], tmp_path, 20), warmed.run(["b", "4"], tmp_path, 20)
    finally:
        warmed.close()
    assert (first.returncode, second.returncode) == (0, 4)
    # the children start from the warmed state; a server the warm-up left with a thread starts over cold
    assert f"seen {seen}" in first.output and f"seen {seen}" in second.output


def test_a_serial_server_runs_the_requests_itself_in_the_folder_asked_for(serial, tmp_path):
    work = tmp_path / "case"
    work.mkdir()
    first, second = serial.run(["a", "3"], work, 20), serial.run(["b"], work, 20)
    assert (first.returncode, second.returncode) == (3, 0)
    assert f"cwd {work}" in first.output and "to stderr" in first.output
    assert "seen 1" in first.output and "seen 2" in second.output  # one process: state is carried over


def test_a_serial_request_starts_from_the_same_state_each_time(serial, tmp_path):
    """Random generators, warnings shown once per location and the working folder are what a
    forked child would have started from, whatever the previous request did with them."""
    first, second = serial.run(["draw"], tmp_path, 20), serial.run(["draw"], tmp_path, 20)
    assert first.returncode == second.returncode == 0
    drawn = [line for line in (first.output + second.output).splitlines() if line.startswith("drew")]
    assert len(drawn) == 2 and drawn[0] == drawn[1]
    assert first.output.count("UserWarning: once") == second.output.count("UserWarning: once") == 1
    assert f"cwd {tmp_path}" in serial.run(["ok"], tmp_path, 20).output  # not the '/' the entry moved to


def test_a_serial_request_that_kills_the_server_is_its_own_result(serial, tmp_path):
    crashed = serial.run(["crash"], tmp_path, 20)
    assert crashed.returncode == 1 and "RuntimeError: boom" in crashed.output
    pid = serial._proc.pid
    assert serial.run(["die"], tmp_path, 20).returncode == 7  # the server's own exit: not retried
    done = serial.run(["ok"], tmp_path, 20)
    assert done.returncode == 0 and "seen 1" in done.output and serial._proc.pid != pid  # a new server


def test_a_serial_timeout_kills_the_server_and_the_next_request_starts_another(serial, tmp_path):
    start = time.monotonic()
    done = serial.run(["sleep"], tmp_path, 1)
    assert done.timed_out and done.returncode != 0 and time.monotonic() - start < 20
    assert serial.run(["ok"], tmp_path, 20).returncode == 0


def test_a_serial_server_that_grew_too_much_is_replaced(server, tmp_path):
    srv = ForkServer(ENTRY, fork=False, recycle_mb=50)
    try:
        assert srv.run(["grow", "10"], tmp_path, 20).returncode == 0
        pid = srv._proc.pid
        assert srv.run(["grow", "100"], tmp_path, 20).returncode == 0  # replied, then left
        assert srv._proc is None
        done = srv.run(["ok"], tmp_path, 20)
        assert done.returncode == 0 and "seen 1" in done.output and srv._proc.pid != pid
    finally:
        srv.close()


@pytest.mark.parametrize("name", ["reference-pt", "reference-export", "reference-onnx"])
def test_the_cli_routes_convert_the_same_files_in_a_forked_child_and_in_a_serial_server(tmp_path, name):
    """What makes the serial mode safe for a route: after other conversions in the same server,
    a conversion writes the same bytes and the same output as a fresh child on the same file."""
    converter = load_converter(name)
    assert not converter._server.fork
    fork = ForkServer(converter._server.entry, converter._server.preload, fork=True)
    cases = [_case(c) for c in ("nn.Conv2d/k3_s2_p1", "nn.LSTM/batch_first", "F.interpolate/nearest_s2_r4-batch2",
                                "nn.Linear/r2-batch4")]
    try:
        for i, case in enumerate(cases):
            serial, forked = tmp_path / "serial" / str(i), tmp_path / "fork" / str(i)
            arts = converter.convert(case, serial)
            source = serial / converter.argv(case, False)[0]
            forked.mkdir(parents=True)
            shutil.copy(source, forked / source.name)
            assert fork.run(converter.argv(case, False), forked, 120).returncode == 0
            written = sorted(p.name for p in serial.iterdir())
            assert written == sorted(p.name for p in forked.iterdir()) and len(arts.paths) == 7
            for file in written:
                assert (serial / file).read_bytes() == (forked / file).read_bytes(), (case.id, file)
    finally:
        fork.close()
        converter.close()
