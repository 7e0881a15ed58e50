"""The generated module's entry points and the `regenerate` command."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from pnnx_reference.emit import main_regenerate, regenerate
from pnnx_reference.emit.python.pnnx_py import default_py_path, generate_python
from pnnx_reference.errors import PnnxError
from pycodegen_helpers import Builder, assert_bitwise, generate, import_file


def _graph(shapes_and_types):
    b = Builder()
    ins = [b.input(torch.zeros(s, dtype=t)) for s, t in shapes_and_types]
    outs = [b.op("Tensor.clone", f"c{i}", [x]) for i, x in enumerate(ins)]
    return b.output(*outs), ins


def test_test_inference_seeds_once_then_rand_per_input(tmp_path):
    graph, ins = _graph([((1, 3, 4), torch.float), ((2, 5), torch.int64), ((3,), torch.bool), ((2,), torch.double)])
    ins[0].shape = [1, 3, -1]  # a dynamic dim becomes 128
    py = generate(graph, tmp_path)
    source = py.read_text()
    assert "    v_0 = torch.rand(1, 3, 128, dtype=torch.float)" in source
    assert "    v_1 = torch.randint(10, (2,5,), dtype=torch.long)" in source
    assert "    v_2 = torch.randint(2, (3,), dtype=torch.bool)" in source
    got = import_file(py).test_inference()
    torch.manual_seed(0)
    expected = (torch.rand(1, 3, 128), torch.randint(10, (2, 5)), torch.randint(2, (3,), dtype=torch.bool),
                torch.rand(2, dtype=torch.double))
    assert_bitwise(got, expected)


def test_input_shapes_override_operand_shapes(tmp_path):
    graph, _ = _graph([((1, 3), torch.float)])
    source = generate_python(graph, tmp_path / "m_pnnx.py", tmp_path / "m.pnnx.bin", input_shapes=[[2, 7]])
    assert "v_0 = torch.rand(2, 7, dtype=torch.float)" in source and "# model inputshape = [2,7]f32" in source
    source = generate_python(graph, tmp_path / "m_pnnx.py", tmp_path / "m.pnnx.bin", input_shapes=[([4], "i32")])
    assert "v_0 = torch.randint(10, (4,), dtype=torch.int)" in source
    with pytest.raises(PnnxError):
        generate_python(graph, tmp_path / "m_pnnx.py", tmp_path / "m.pnnx.bin", input_shapes=[[1], [2]])


def test_export_torchscript_writes_next_to_the_file(tmp_path, monkeypatch):
    graph, _ = _graph([((2, 3), torch.float)])
    py = generate(graph, tmp_path / "out")
    monkeypatch.chdir(tmp_path)
    import_file(py).export_torchscript()
    traced = torch.jit.load(str(tmp_path / "out" / "model_pnnx.py.pt"))
    x = torch.rand(2, 3)
    assert torch.equal(traced(x), x)


def test_export_onnx_runs(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    graph, _ = _graph([((2, 3), torch.float)])
    py = generate(graph, tmp_path)
    import_file(py).export_onnx()
    session = ort.InferenceSession(str(tmp_path / "model_pnnx.py.onnx"))
    x = torch.rand(2, 3)
    (y,) = session.run(None, {"in0": x.numpy()})
    assert torch.equal(torch.from_numpy(y), x)


def test_generated_file_runs_as_a_script(tmp_path):
    graph, _ = _graph([((2, 2), torch.float)])
    py = generate(graph, tmp_path)
    done = subprocess.run([sys.executable, str(py)], cwd="/", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "tensor(" in done.stdout


def test_regenerate_from_saved_param(tmp_path):
    torch.manual_seed(5)
    lin = torch.nn.Linear(4, 3)
    x = torch.rand(2, 4)
    b = Builder()
    i = b.input(x)
    y = b.op("nn.Linear", "fc", [i], params=dict(in_features=4, out_features=3, bias=True),
             attrs=dict(weight=lin.weight, bias=lin.bias))
    z = b.op("pnnx.Expression", "pnnx_expr_0", [y], params=dict(expr="mul(@0,0.1)"))
    generate(b.output(z), tmp_path, name="net")
    (tmp_path / "net_pnnx.py").unlink()
    py = regenerate(tmp_path / "net.pnnx.param")
    assert py == tmp_path / "net_pnnx.py" == default_py_path(tmp_path / "net.pnnx.param")
    net = import_file(py).Model().eval()
    with torch.no_grad():
        assert_bitwise((net(x),), (lin(x) * 0.1,))


def test_main_regenerate_errors_are_one_line(tmp_path, capsys):
    assert main_regenerate([]) == 1
    assert main_regenerate([str(tmp_path / "missing.pnnx.param")]) == 1
    assert main_regenerate(["a.pnnx.param", "bogus=1"]) == 1
    (tmp_path / "bad.pnnx.param").write_text("not a param file\n")
    assert main_regenerate([str(tmp_path / "bad.pnnx.param")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4 and all("Traceback" not in line for line in err)
    assert err[0].startswith("error: usage: pnnxref regenerate")
