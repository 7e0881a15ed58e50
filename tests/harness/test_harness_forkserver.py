"""The fork server behind command-line routes (converters/forkserver.py) and the reference-pt
converter that uses it."""
import os
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


def test_reference_pt_writes_upstreams_file_names_from_case_pt(tmp_path):
    converter = ReferencePtConverter()
    arts = converter.convert(_case("nn.Conv2d/k3_s2_p1"), tmp_path)
    assert {p.name for p in arts.paths.values()} == {
        "case.pnnx.param", "case.pnnx.bin", "case_pnnx.py", "case.pnnx.onnx", "case.ncnn.param", "case.ncnn.bin",
        "case_ncnn.py"}
    assert (tmp_path / "case.pt").is_file() and "FLOPS = " in arts.log


def test_reference_pt_reports_declined_emitters_and_errors(tmp_path):
    converter = ReferencePtConverter()
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


def test_reference_onnx_reports_the_error_line_of_a_bad_file(tmp_path):
    converter = load_converter("reference-onnx")
    broken = _case("nn.Conv2d/k3_s2_p1")
    with pytest.raises(NotSupported, match="torch.onnx.export"):
        converter.convert(broken, tmp_path / "bad", broken.make_model(), [torch.rand(1, 5, 8, 8)])


@pytest.mark.parametrize("case_id, why", [
    ("nn.AvgPool1d/k2-nobatch", "the ONNX checker refuses"),  # a pool of a rank-2 tensor
    ("nn.AdaptiveAvgPool1d/o1-nobatch", "onnxruntime cannot run"),
    ("nn.AdaptiveAvgPool3d/o1-nobatch", "that computes something else"),  # pools over the channels
    ("torch.floor_divide/same_r4", "that computes something else"),  # truncates
    ("nn.PairwiseDistance/p2-nobatch", "that computes something else")])  # keeps a dim
def test_reference_onnx_calls_what_torch_onnx_exports_wrongly_unsupported(tmp_path, case_id, why):
    """The exporter's failures are not the frontend's: the matrix shows them as unsupported."""
    with pytest.raises(NotSupported, match=f"torch.onnx.export wrote a file {why}"):
        load_converter("reference-onnx").convert(_case(case_id), tmp_path)


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
