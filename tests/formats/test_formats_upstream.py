"""Round trips on files the upstream `pnnx` command writes, produced at test time.

Models are traced and converted once per test session (one xdist worker runs the module; a
lock keeps the folder shared should several); nothing upstream writes is committed."""
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from filelock import FileLock

from pnnx_conformance.converters.upstream import pnnx_command
from pnnx_reference.formats import ncnn_bin, ncnn_param, pnnx_param
from pnnx_reference.formats.floatfmt import float_to_string
from pnnx_reference.validate import validate

# one worker runs the module (tox.ini's `--dist loadgroup`): the other goes on with other tests
# instead of waiting on the lock while the upstream conversions are made
pytestmark = [pytest.mark.upstream, pytest.mark.xdist_group("formats_upstream")]

PNNX = pnnx_command()  # the binary the `pnnx` console script execs, without that script's torch import
SLOPES = [0.1, 1e-5, 1 / 3, 3.14159265, 9.5e-5, 1e6, 123456.7, 0.0001234567, 2.5e-7, 1e30,
          16777217.0, 0.001, 100.0, 0.2, 7e-3, 65504.0]
FP16_PROBE = np.array([1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 65520.0, 65519.0, 65504.0,
                       2**-14 * (1 - 2**-12), 2**-15, 1e-8, np.nan, np.inf, -np.inf, 1 + 2**-12,
                       2**-14, 70000.0, -0.0, 0.1], np.float32)  # 17 values: odd, so padded

# name -> (inputshape, extra pnnx arguments)
MODELS = {
    "resnet18": ("[1,3,64,64]", []),
    "mobilenet_v2": ("[1,3,64,64]", []),
    "encoder_layer": ("[1,5,16]", []),
    "small": ("[1,3,16,20]", ["inputshape2=[1,3,24,32]", "fp16=0"]),
    "probes": ("[1,17]", []),  # fp16 conversion probe weights, then float-format probe slopes
}


def _small_module():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8, eps=1e-3)
            self.K = nn.Parameter(torch.rand(1, 8, 1, 1))
            self.ln = nn.LayerNorm(8)
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            y = F.relu(self.bn(self.conv(x)))
            y = F.leaky_relu(y * torch.sigmoid(y) * 0.5, 0.1) + self.K
            z = F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)[:, :6, :, 2:]
            m = torch.clamp(torch.cat((z, z), dim=1).mean(dim=-1), min=-1.5, max=2.25)
            p = self.ln(F.adaptive_avg_pool2d(y, 1).flatten(1))
            return self.fc(p), m

    return Small(), torch.rand(1, 3, 16, 20)


def _module(name):
    import torch
    import torchvision
    from torch import nn

    torch.manual_seed(0)
    if name in ("resnet18", "mobilenet_v2"):
        return getattr(torchvision.models, name)(weights=None), torch.rand(1, 3, 64, 64)
    if name == "encoder_layer":
        return nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), torch.rand(1, 5, 16)
    if name == "probes":
        linear = nn.Linear(17, 1, bias=False)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(FP16_PROBE).reshape(1, 17))
        return nn.Sequential(linear, *[nn.LeakyReLU(s) for s in SLOPES]), torch.rand(1, 17)
    return _small_module()


def _convert_all(folder: Path) -> None:
    import torch

    for name, (shape, extra) in MODELS.items():
        module, example = _module(name)
        torch.jit.trace(module.eval(), example, check_trace=False).save(str(folder / f"{name}.pt"))
        done = subprocess.run([PNNX, f"{name}.pt", f"inputshape={shape}", *extra], cwd=folder,
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or not (folder / f"{name}.pnnx.param").exists():
            raise RuntimeError(f"upstream pnnx failed on {name}: {done.stderr[-2000:]}")


@pytest.fixture(scope="session")
def upstream(tmp_path_factory) -> Path:
    """A folder with every MODELS entry converted by upstream pnnx (built once per run)."""
    if PNNX is None:
        pytest.skip("the upstream pnnx command is not installed")
    root = tmp_path_factory.getbasetemp().parent  # shared by all xdist workers
    folder = root / "formats_upstream"
    with FileLock(str(root / "formats_upstream.lock")):
        marker = folder / "done.json"
        if not marker.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            _convert_all(folder)
            marker.write_text(json.dumps(sorted(MODELS)))
    return folder


NETWORKS = ["resnet18", "mobilenet_v2", "encoder_layer", "small", "probes"]


@pytest.mark.parametrize("name", NETWORKS)
def test_pnnx_param_round_trip_is_byte_identical(upstream, name):
    path = upstream / f"{name}.pnnx.param"
    text = path.read_text()
    assert pnnx_param.dumps(pnnx_param.loads(text, path)) == text


@pytest.mark.parametrize("name", NETWORKS)
def test_pnnx_bin_rewritten_is_byte_identical(upstream, name, tmp_path):
    graph = pnnx_param.load(upstream / f"{name}.pnnx.param")
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    assert (tmp_path / "m.pnnx.bin").read_bytes() == (upstream / f"{name}.pnnx.bin").read_bytes()
    assert (tmp_path / "m.pnnx.param").read_bytes() == (upstream / f"{name}.pnnx.param").read_bytes()


@pytest.mark.parametrize("name", NETWORKS)
def test_ncnn_param_round_trip_is_byte_identical(upstream, name):
    path = upstream / f"{name}.ncnn.param"
    text = path.read_text()
    assert ncnn_param.dumps(ncnn_param.loads(text, path)) == text


@pytest.mark.parametrize("name", NETWORKS)
@pytest.mark.parametrize("kind", ["pnnx", "ncnn"])
def test_upstream_files_validate_clean(upstream, name, kind):
    assert validate(upstream / f"{name}.{kind}.param") == []


@pytest.mark.parametrize("name", NETWORKS)
def test_ncnn_bin_walk_covers_every_byte(upstream, name):
    model = ncnn_param.load(upstream / f"{name}.ncnn.param")
    data = (upstream / f"{name}.ncnn.bin").read_bytes()
    result = ncnn_bin.walk_bin(data, model.layers)
    assert result.complete and result.problems == [] and result.consumed == len(data)


def test_small_model_has_the_tricky_parts(upstream):
    text = (upstream / "small.pnnx.param").read_text()
    for piece in ["#0=(1,3,?,?)f32", "pnnx.Attribute", "$input=", "=(-1)", "eps=1.000000e-5",
                  "scale_factor=(2.0,2.0)", "Tensor.slice", "min=-1.5"]:
        assert piece in text, piece
    ncnn = (upstream / "small.ncnn.bin").read_bytes()
    assert ncnn[32:36] == b"\0\0\0\0"  # after MemoryData K (8 floats), fp16=0's fp32 tag


def test_float_format_matches_upstream(upstream):
    graph = pnnx_param.load_text(upstream / "probes.pnnx.param")
    written = [line.split("negative_slope=")[1].split()[0]
               for line in (upstream / "probes.pnnx.param").read_text().splitlines() if "negative_slope=" in line]
    assert written == [float_to_string(s) for s in SLOPES]
    assert [op.params["negative_slope"] for op in graph.ops if op.type == "nn.LeakyReLU"] == \
        [float(np.float32(s)) for s in SLOPES]


def test_fp16_weights_match_upstream_bytes(upstream):
    data = (upstream / "probes.ncnn.bin").read_bytes()
    assert data == ncnn_bin.pack_weight(FP16_PROBE, tagged=True, fp16=True)
    assert data[-2:] == b"\x83\x22"  # the odd count's fixed padding
