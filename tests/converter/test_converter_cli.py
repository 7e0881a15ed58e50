"""The pnnxref command: upstream's key=value options, one clear error line on bad input."""
import subprocess
import sys
import textwrap

import pytest

from pnnx_reference.cli import main, parse_args, parse_shapes
from pnnx_reference.errors import UsageError

MODEL = textwrap.dedent("""
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x).relu()
""")


def test_parse_shapes_with_types():
    assert parse_shapes("inputshape", "[1,3,224,224],[1,77]i64") == ([[1, 3, 224, 224], [1, 77]], [None, "i64"])


def test_empty_brackets_are_a_0d_tensor_as_upstream_reads_them():
    assert parse_shapes("inputshape", "[]f32,[2]") == ([[], [2]], ["f32", None])


@pytest.mark.parametrize("text", ["[1,3,224", "1,3", "[1,a]", "[1,0]", "[1,2]x[3]", ""])
def test_malformed_shapes(text):
    with pytest.raises(UsageError, match="inputshape"):
        parse_shapes("inputshape", text)


@pytest.mark.parametrize("argv, message", [
    ([], "no model given"),
    (["m.py", "bogus=1"], "unknown option 'bogus'"),
    (["m.py", "optlevel"], "not key=value"),
    (["m.py", "optlevel=3"], "optlevel must be 0, 1 or 2"),
    (["m.py", "fp16=yes"], "fp16 must be 0 or 1"),
    (["m.py", "device=tpu"], "device must be cpu or gpu"),
])
def test_bad_options(argv, message):
    with pytest.raises(UsageError, match=message):
        parse_args(argv)


def _run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv, message", [
    (["missing.py", "inputshape=[1,4]"], "missing.py: no such file"),
    (["no_colon_module", "inputshape=[1,4]"], "MODEL must be"),
    (["json:nothing_here", "inputshape=[1,4]"], "json has no nothing_here"),
    (["nonexistent_pkg_xyz:f", "inputshape=[1,4]"], "cannot import"),
    (["json:dumps", "inputshape=[1,4]"], "building the model failed"),
])
def test_errors_are_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(argv, capsys)
    assert code == 2 and message in err and err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_pt_goes_to_the_torchscript_frontend(tmp_path, capsys):
    import torch

    pt = tmp_path / "m.pt"
    torch.jit.trace(torch.nn.Sequential(torch.nn.Linear(4, 3)), torch.rand(1, 4)).save(str(pt))
    code, _, err = _run([str(pt), "inputshape=[1,4]"], capsys)
    assert code == 0, err
    assert "nn.Linear" in (tmp_path / "m.pnnx.param").read_text()


def test_missing_pt_file(capsys, tmp_path):
    code, _, err = _run([str(tmp_path / "nothere.pt"), "inputshape=[1,4]"], capsys)
    assert code == 2 and "no such file" in err


def test_python_file_converts_beside_itself(tmp_path, capsys):
    model = tmp_path / "tiny.py"
    model.write_text(MODEL)
    code, out, err = _run([str(model), "inputshape=[2,4]", "optlevel=1"], capsys)
    assert code == 0, err
    param = (tmp_path / "tiny.pnnx.param").read_text()
    assert "nn.Linear" in param and "Tensor.relu" in param
    assert (tmp_path / "tiny.pnnx.bin").is_file() and (tmp_path / "tiny_pnnx.py").is_file()


def test_model_failing_on_inputshape(tmp_path, capsys):
    model = tmp_path / "tiny.py"
    model.write_text(MODEL)
    code, _, err = _run([str(model), "inputshape=[2,5]"], capsys)
    assert code == 2 and "cannot run on the given inputs" in err
    assert not (tmp_path / "tiny.pnnx.param").exists()


@pytest.mark.slow
def test_console_script_runs(tmp_path):
    model = tmp_path / "tiny.py"
    model.write_text(MODEL)
    out = tmp_path / "custom.pnnx.param"
    result = subprocess.run([sys.executable, "-m", "pnnx_reference.cli", str(model), "inputshape=[2,4]",
                             f"pnnxparam={out}"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert out.is_file()
