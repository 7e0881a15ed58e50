"""`pnnxref regenerate FILE.pnnx.param`: the load-back path is reachable from the command line."""
import importlib.util

import torch

from pnnx_reference.cli import main

from test_converter_cli import MODEL


def _convert(tmp_path, capsys):
    model = tmp_path / "tiny.py"
    model.write_text(MODEL)
    assert main([str(model), "inputshape=[2,4]"]) == 0
    capsys.readouterr()
    return tmp_path / "tiny.pnnx.param"


def _load(py):
    spec = importlib.util.spec_from_file_location(f"regen_{py.stem}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model().eval()


def test_regenerate_writes_runnable_python(tmp_path, capsys):
    param = _convert(tmp_path, capsys)
    out = tmp_path / "again_pnnx.py"
    assert main(["regenerate", str(param), f"pnnxbin={tmp_path / 'tiny.pnnx.bin'}", f"pnnxpy={out}"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    x = torch.rand(2, 4)
    assert torch.equal(_load(out)(x), _load(tmp_path / "tiny_pnnx.py")(x))


def test_regenerate_default_output_name(tmp_path, capsys):
    param = _convert(tmp_path, capsys)
    (tmp_path / "tiny_pnnx.py").unlink()
    assert main(["regenerate", str(param)]) == 0
    assert (tmp_path / "tiny_pnnx.py").is_file()


def test_regenerate_errors_are_one_line(tmp_path, capsys):
    assert main(["regenerate", str(tmp_path / "nothere.pnnx.param")]) != 0
    assert main(["regenerate", "a.pnnx.param", "bogus=1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "Traceback" not in "".join(err)
    assert "nothere.pnnx.param" in err[0] and err[1] == "error: unknown option bogus"


def test_an_ncnn_param_is_named_as_such(tmp_path, capsys):
    """Issue 33 item 10: was 'parameter -23303: malformed integer' (an ncnn array read as pnnx)."""
    _convert(tmp_path, capsys)
    renamed = tmp_path / "renamed.param"
    renamed.write_text((tmp_path / "tiny.ncnn.param").read_text())
    before = sorted(p.name for p in tmp_path.iterdir())
    for param in (tmp_path / "tiny.ncnn.param", renamed):
        assert main(["regenerate", str(param)]) == 1
        assert capsys.readouterr().err == (f"error: {param}: an ncnn.param, not a pnnx.param: regenerate reads "
                                           "pnnx.param (the _ncnn.py written beside the ncnn.param runs it)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
