"""export(): every artefact written, graph returned, emitter failures recorded not raised."""
import pytest
import torch
import torch.nn as nn
import torchvision

from converter_helpers import types
from script_modules import import_file
from pnnx_reference.api import ARTEFACTS, export
from pnnx_reference.formats import pnnx_param


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return self.fc(x.mean((2, 3)))


def test_tiny_model_round_trips_through_the_files(tmp_path):
    torch.manual_seed(0)
    model = Tiny().eval()
    x = torch.rand(1, 3, 8, 8)
    result = export(model, x, tmp_path, "tiny", optlevel=1)
    assert result.paths["pnnxparam"] == tmp_path / "tiny.pnnx.param"
    loaded = pnnx_param.load(result.paths["pnnxparam"], result.paths["pnnxbin"])
    assert types(loaded) == types(result.graph)
    generated = import_file(result.paths["pnnxpy"], "tiny_pnnx")
    net = generated.Model().eval()
    with torch.no_grad():
        assert torch.equal(net(x), model(x))


def test_unsupported_emitter_is_recorded(tmp_path):
    class Strided(nn.Module):
        def forward(self, x):
            return x[:, ::2]

    result = export(Strided(), torch.rand(2, 8), tmp_path, "s")
    assert "pnnxparam" in result.paths and "pnnxpy" in result.paths
    for emitter, message in result.unsupported.items():
        assert emitter in ("onnx", "ncnn") and message
    assert set(result.paths) | {a for a in ARTEFACTS if a.startswith(tuple(result.unsupported))} == set(ARTEFACTS)


@pytest.mark.slow
def test_resnet18_writes_every_file(tmp_path):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.rand(1, 3, 224, 224)
    result = export(model, x, tmp_path, "resnet18")
    assert result.unsupported == {}
    assert set(result.paths) == set(ARTEFACTS)
    for path in result.paths.values():
        assert path.stat().st_size > 0
    assert types(result.graph).count("nn.Conv2d") == 20 and "nn.BatchNorm2d" not in types(result.graph)
    generated = import_file(result.paths["pnnxpy"], "resnet18_pnnx")
    net = generated.Model().eval()
    with torch.no_grad():
        torch.testing.assert_close(net(x), model(x), rtol=1e-4, atol=1e-4)


def test_regenerated_model_converts_to_the_same_param(tmp_path):
    torch.manual_seed(0)
    x = torch.rand(1, 3, 8, 8)
    first = export(Tiny().eval(), x, tmp_path, "first")
    regenerated = import_file(first.paths["pnnxpy"], "first_pnnx").Model().eval()
    second = export(regenerated, x, tmp_path, "second")
    assert pnnx_param.dumps(second.graph) == pnnx_param.dumps(first.graph)


def test_dynamic_export_feeds_the_first_shapes_to_test_inference(tmp_path):
    result = export(Tiny().eval(), torch.rand(1, 3, 8, 8), tmp_path, "dyn", inputs2=torch.rand(1, 3, 6, 10))
    assert result.graph.inputs()[0].outputs[0].shape == [1, 3, -1, -1]
    generated = import_file(result.paths["pnnxpy"], "dyn_pnnx")
    assert generated.test_inference().shape == (1, 2)


def test_each_modules_own_mode_is_put_back(tmp_path):
    """A wrapper in training mode around a model put in eval mode (transformers' from-config
    models are used so): the export converts in eval mode and leaves every module as it found it,
    the inner one still in eval (model.train() would have switched its dropout on)."""
    inner = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval()
    wrapper = nn.Sequential(inner)
    export(wrapper, torch.rand(1, 4), tmp_path, "m", self_check=False)
    assert wrapper.training and not inner.training and not inner[1].training


def test_an_onnx_model_past_its_size_limit_gets_its_data_file_moved_beside_it(tmp_path, monkeypatch):
    """The onnx emitter is imported when its file is written (the converter runs without onnx):
    the data file it writes past protobuf's limit (here 64 bytes) is still staged, moved
    into place with the rest and reported."""
    import functools

    import pnnx_reference.emit.onnx as onnx_emitter

    monkeypatch.setattr(onnx_emitter, "write_onnx", functools.partial(onnx_emitter.write_onnx, external_over=64))
    torch.manual_seed(0)
    result = export(Tiny().eval(), torch.rand(1, 3, 8, 8), tmp_path, "tiny")
    assert result.paths["pnnxonnxdata"] == tmp_path / "tiny.pnnx.onnx.data"
    assert result.paths["pnnxonnxdata"].is_file() and result.paths["pnnxonnx"].is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["tiny.pnnx.param", "tiny.pnnx.bin", "tiny_pnnx.py", "tiny.pnnx.onnx", "tiny.pnnx.onnx.data",
         "tiny.ncnn.param", "tiny.ncnn.bin", "tiny_ncnn.py"])
