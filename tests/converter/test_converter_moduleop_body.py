"""moduleop=: the kept module's own body is captured in memory, so `_pnnx.py` can write it as
a class of its own; pnnx.param still holds one operator line, and a graph read back from it
(no body) is still refused by the Python generator."""
import subprocess
import sys

import pytest
import torch
import torch.nn as nn

from converter_helpers import types
from script_modules import import_file
from moduleop_models import Focus, Outer, build_model, moduleop_of
from pnnx_reference.api import capture, export
from pnnx_reference.emit.python.pnnx_py import regenerate
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.ir import body_weight_key


def _one(graph, suffix):
    found = [op for op in graph.ops if op.type.endswith(suffix)]
    assert len(found) == 1, types(graph)
    return found[0]


def _export(tmp_path, model, x, name="m", **options):
    result = export(model, x, tmp_path, name, moduleop=moduleop_of(model), **options)
    assert "pnnxpy" in result.paths, result.unsupported
    return result


def test_body_is_captured_with_the_operators_weights():
    graph = capture(model := build_model(), torch.rand(1, 3, 16, 16), moduleop=moduleop_of(model))
    focus = _one(graph, ".Focus")
    body = focus.subgraph
    assert "torch.cat" in types(body) and "torch.cat" not in types(graph)
    assert "nn.BatchNorm2d" in types(body)  # no conv+bn fusion inside: the weights keep their names
    used = {body_weight_key(op, key): attr for op in body.ops for key, attr in op.attrs.items()}
    assert sorted(used) == sorted(focus.attrs)
    assert all(used[k] is focus.attrs[k] for k in used)
    assert _one(graph, ".Shuffle").subgraph is not None and not _one(graph, ".Shuffle").attrs


def test_pnnx_param_keeps_one_line_per_moduleop(tmp_path):
    result = _export(tmp_path, build_model(), torch.rand(1, 3, 16, 16))
    lines = result.paths["pnnxparam"].read_text().splitlines()[2:]
    kinds = [line.split()[0] for line in lines]
    assert sum(k.endswith(".Focus") for k in kinds) == 1 and sum(k.endswith(".Shuffle") for k in kinds) == 1
    assert "torch.cat" not in kinds and "nn.SiLU" not in kinds
    focus = next(line for line in lines if line.split()[0].endswith(".Focus"))
    assert "@conv.0.weight=(8,12,3,3)f32" in focus and "@gain=(1,8,1,1)f32" in focus


def test_generated_python_matches_torch(tmp_path):
    model, x = build_model(), torch.rand(1, 3, 16, 16)
    result = _export(tmp_path, model, x)
    source = result.paths["pnnxpy"].read_text()
    assert "class Focus(nn.Module):" in source and "class Shuffle(nn.Module):" in source
    assert "self.focus = Focus(archive, 'focus.')" in source
    net = import_file(result.paths["pnnxpy"], "moduleop_body_pnnx").Model().eval()
    with torch.no_grad():
        assert torch.allclose(net(x), model(x), rtol=0, atol=1e-6)


def test_generated_python_runs_standalone(tmp_path):
    result = _export(tmp_path, build_model(), torch.rand(1, 3, 16, 16))
    run = subprocess.run([sys.executable, str(result.paths["pnnxpy"])], cwd="/", capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "tensor(" in run.stdout


def test_nested_moduleop_and_a_second_configuration(tmp_path):
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.outer = Focus(3, 4), Focus(3, 4), Outer()
            self.c = Focus(4, 4)

        def forward(self, x):
            y = self.a(x) + self.b(x)
            return self.c(y), self.outer(x)

    model, x = build_model(Two), torch.rand(1, 3, 16, 16)
    result = _export(tmp_path, model, x)
    source = result.paths["pnnxpy"].read_text()
    assert source.count("class Focus") == 2  # Focus(3, 4) in a, b and outer.inner; Focus(4, 4) in c
    assert "self.inner = Focus(archive, prefix + 'inner.')" in source
    net = import_file(result.paths["pnnxpy"], "moduleop_nested_pnnx").Model().eval()
    with torch.no_grad():
        for got, want in zip(net(x), model(x)):
            assert torch.allclose(got, want, rtol=0, atol=1e-6)


def test_regenerate_from_param_alone_is_refused(tmp_path):
    result = _export(tmp_path, build_model(), torch.rand(1, 3, 16, 16))
    with pytest.raises(UnsupportedOperator, match=r"\.Focus \(focus\): no PyTorch Python API"):
        regenerate(result.paths["pnnxparam"], tmp_path / "again_pnnx.py")


def test_body_constant_outside_pnnx_bin_is_unsupported_for_python(tmp_path):
    class Scale(nn.Module):
        def forward(self, x):
            return x * torch.tensor([[[[1.0]], [[2.0]], [[3.0]]]])

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = Scale()

        def forward(self, x):
            return self.scale(x)

    result = export(Wrap(), torch.rand(1, 3, 2, 2), tmp_path, "c", moduleop=[Scale])
    assert "pnnx.bin does not hold it" in result.unsupported["python"]
    assert "pnnxonnx" in result.paths  # the ONNX function carries the constant itself


def test_body_that_cannot_be_captured_leaves_an_opaque_operator(tmp_path):
    class Odd(nn.Module):
        def forward(self, x):
            y = x.clone()
            y.transpose(1, 2).mul_(2)  # in-place on a transposed view: the capture refuses it
            return y

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.odd = Odd()

        def forward(self, x):
            return self.odd(x) + 1

    result = export(Wrap(), torch.rand(1, 3, 2, 2), tmp_path, "o", moduleop=[Odd])
    assert _one(result.graph, ".Odd").subgraph is None
    assert "pnnxparam" in result.paths and "no PyTorch Python API" in result.unsupported["python"]
