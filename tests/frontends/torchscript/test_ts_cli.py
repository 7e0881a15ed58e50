"""`pnnxref model.pt ...`: upstream's file names, working test_inference(), clear errors."""
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from pnnx_reference.cli import main

EXPECTED = {"tiny_net.pnnx.param", "tiny_net.pnnx.bin", "tiny_net_pnnx.py", "tiny_net.pnnx.onnx",
            "tiny_net.ncnn.param", "tiny_net.ncnn.bin", "tiny_net_ncnn.py"}


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        return self.fc(y.mean(dim=(2, 3)) * 2 + 1)


def save_traced(model, shape, path: Path) -> Path:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(model.eval(), torch.rand(shape)).save(str(path))
    return path


def load_generated(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_output(pt: Path, shape):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.load(str(pt))(torch.rand(shape))


def test_output_names_beside_input_with_dash_replaced(tmp_path, capsys):
    pt = save_traced(Tiny(), (1, 3, 16, 16), tmp_path / "tiny-net.pt")
    assert main([str(pt), "inputshape=[1,3,16,16]"]) == 0, capsys.readouterr().err
    assert {p.name for p in tmp_path.iterdir()} - {"tiny-net.pt"} == EXPECTED


@pytest.mark.slow
def test_same_file_names_as_upstream(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "upstream"
    for folder in (ours, theirs):
        folder.mkdir()
        save_traced(Tiny(), (1, 3, 16, 16), folder / "tiny-net.pt")
    pnnx = Path(sys.executable).with_name("pnnx")
    subprocess.run([str(pnnx), "tiny-net.pt", "inputshape=[1,3,16,16]"], cwd=theirs,
                   capture_output=True, timeout=300)
    assert main([str(ours / "tiny-net.pt"), "inputshape=[1,3,16,16]"]) == 0
    names = lambda folder: {p.name for p in folder.iterdir()}  # noqa: E731
    assert names(ours) == names(theirs)


@pytest.mark.parametrize("shape", [(1, 3, 16, 16), (1, 3, 24, 20)])
def test_generated_test_inference_matches_model(tmp_path, shape, capsys):
    pt = save_traced(Tiny(), (1, 3, 16, 16), tmp_path / "tiny.pt")
    inputshape = "[" + ",".join(map(str, shape)) + "]"
    assert main([str(pt), f"inputshape={inputshape}", "fp16=0"]) == 0, capsys.readouterr().err
    expected = reference_output(pt, shape)
    got = load_generated(tmp_path / "tiny_pnnx.py").test_inference()
    assert got.shape == expected.shape  # the CLI inputshape reaches test_inference()
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    ncnn_out = torch.as_tensor(load_generated(tmp_path / "tiny_ncnn.py").test_inference())
    torch.testing.assert_close(ncnn_out.reshape(expected.shape), expected, rtol=1e-3, atol=1e-3)


@pytest.mark.slow
def test_torchvision_resnet18(tmp_path, capsys):
    torchvision = pytest.importorskip("torchvision")
    pt = save_traced(torchvision.models.resnet18(weights=None), (1, 3, 64, 64), tmp_path / "resnet18.pt")
    assert main([str(pt), "inputshape=[1,3,64,64]", "fp16=0"]) == 0, capsys.readouterr().err
    param = (tmp_path / "resnet18.pnnx.param").read_text()
    assert param.count("nn.Conv2d") == 20 and "nn.Linear" in param and "nn.MaxPool2d" in param
    got = load_generated(tmp_path / "resnet18_pnnx.py").test_inference()
    torch.testing.assert_close(got, reference_output(pt, (1, 3, 64, 64)), rtol=1e-4, atol=1e-4)


def _error(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    return err


def test_missing_file(tmp_path, capsys):
    assert "no such file" in _error([str(tmp_path / "nope.pt"), "inputshape=[1,3]"], capsys)


def test_not_a_torchscript_file(tmp_path, capsys):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"this is not a zip archive")
    assert "not a loadable TorchScript file" in _error([str(bad), "inputshape=[1,3]"], capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt"]  # nothing half-written


@pytest.mark.parametrize("arg, message", [
    ("inputshape=[1,3,x]", "malformed"), ("inputshape=1,3", "malformed"),
    ("inputshape=[1,0,4]", "positive"), ("shape=[1,3]", "unknown option"),
    ("fp16=2", "fp16"), ("optlevel=3", "optlevel"), ("device=tpu", "device"),
])
def test_bad_arguments(tmp_path, capsys, arg, message):
    pt = save_traced(Tiny(), (1, 3, 16, 16), tmp_path / "tiny.pt")
    argv = [str(pt), arg] if arg.startswith("inputshape") else [str(pt), "inputshape=[1,3,16,16]", arg]
    assert message in _error(argv, capsys)


def test_wrong_inputshape_for_model(tmp_path, capsys):
    pt = save_traced(Tiny(), (1, 3, 16, 16), tmp_path / "tiny.pt")
    assert "cannot run" in _error([str(pt), "inputshape=[1,5,16,16]"], capsys)


@pytest.mark.parametrize("arg, cause", [
    ("inputshape=[1,5,16,16]", "RuntimeError: Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 5, 16, 16] "
                               "to have 3 channels, but got 5 channels instead"),
    ("inputshape=[3,16,16,1,1]", "RuntimeError: Expected 4-dimensional input for 4-dimensional weight [8, 3, 3, 3], "
                                 "but got 5-dimensional input of size [3, 16, 16, 1, 1] instead"),
    ("inputshape=[1,3,16,16]i64", "RuntimeError: expected scalar type Long but found Float"),
    ("input=x.npy", "RuntimeError: expected scalar type Double but found Float"),
])
def test_inputs_that_do_not_fit_give_the_cause(tmp_path, capsys, monkeypatch, arg, cause):
    """Issue 33 item 5: the cause, not the TorchScript interpreter's generic first line."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((1, 3, 16, 16)))  # float64
    pt = save_traced(Tiny(), (1, 3, 16, 16), tmp_path / "tiny.pt")
    assert _error([str(pt), arg], capsys) == f"error: the model cannot run on the given inputs: {cause}\n"


class Focus(nn.Module):
    def forward(self, x):
        return torch.cat([x[..., ::2, ::2], x[..., 1::2, 1::2]], 1)


class WithFocus(nn.Module):
    def __init__(self):
        super().__init__()
        self.focus = Focus()
        self.conv = nn.Conv2d(6, 4, 1)

    def forward(self, x):
        return self.conv(self.focus(x))


def test_option_paths_and_levels(tmp_path, capsys):
    pt = save_traced(WithFocus(), (1, 3, 8, 8), tmp_path / "focus.pt")
    param = tmp_path / "out" / "custom.param"
    code = main([str(pt), "inputshape=[1,3,8,8]", "optlevel=1", "fp16=0", "device=cpu",
                 f"pnnxparam={param}"])
    assert code == 0, capsys.readouterr().err
    assert "nn.Conv2d" in param.read_text() and "torch.cat" in param.read_text()
    assert not (tmp_path / "focus.pnnx.param").exists() and (tmp_path / "focus.pnnx.bin").is_file()


def test_moduleop_names_the_original_class(tmp_path):
    from pnnx_reference.api import capture
    from pnnx_reference.frontends.torchscript import load

    pt = save_traced(WithFocus(), (1, 3, 8, 8), tmp_path / "focus.pt")
    qualified = f"{Focus.__module__}.{Focus.__qualname__}"
    graph = capture(load(pt), input_shapes=[[1, 3, 8, 8]], moduleop=[qualified])
    types = [op.type for op in graph.ops]
    assert qualified in types and "nn.Conv2d" in types and "torch.cat" not in types
