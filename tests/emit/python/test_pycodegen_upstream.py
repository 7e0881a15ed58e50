"""Load back a pnnx.param written by the upstream `pnnx` command: our regenerated `_pnnx.py`
must run and give exactly the outputs of upstream's own generated `_pnnx.py`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pnnx_conformance.converters.upstream import pnnx_command
from pnnx_reference.emit import main_regenerate
from pycodegen_helpers import assert_bitwise, import_file

pytestmark = [pytest.mark.slow, pytest.mark.upstream]

MODEL = '''
import torch, torch.nn as nn, torch.nn.functional as F

class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        s.bn = nn.BatchNorm2d(8)
        s.fc = nn.Linear(8, 5)
        s.lstm = nn.LSTM(5, 6, batch_first=True)
        s.register_buffer("scale", torch.rand(1, 5))

    def forward(s, x, y):
        a = F.relu(s.bn(s.conv(x)))
        a = F.adaptive_avg_pool2d(a, 1).flatten(1)
        b = torch.sqrt((s.fc(a) * 2 - y[:, 1:6]).abs() / 12) + s.scale
        c = torch.cat((b, b.sigmoid()), dim=0).unsqueeze(0)
        o, (h, cc) = s.lstm(c)
        d = F.leaky_relu(o[:, -1], 0.1).reshape(2, 3).transpose(0, 1)
        # upstream pnnx crashes (exit 245) when the LSTM hidden state is a model output
        return d, torch.softmax(b, dim=1), x[..., ::2, 1]

torch.manual_seed(7)
m = M().eval()
with torch.no_grad():
    m.bn.running_mean.uniform_(-0.5, 0.5)
    m.bn.running_var.uniform_(0.5, 1.5)
torch.jit.trace(m, (torch.rand(1, 3, 8, 8), torch.rand(1, 7))).save("tiny.pt")
'''


pytestmark = pytest.mark.xdist_group("pycodegen_upstream")  # one upstream conversion per session (loadgroup)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    pnnx = pnnx_command()  # the binary the `pnnx` console script execs, without that script's torch import
    if pnnx is None or not Path(pnnx).exists():
        pytest.fail("the upstream pnnx command is missing from the test environment")
    folder = tmp_path_factory.mktemp("upstream")
    (folder / "make.py").write_text(MODEL)
    subprocess.run([sys.executable, "make.py"], cwd=folder, check=True, capture_output=True)
    subprocess.run([pnnx, "tiny.pt", "inputshape=[1,3,8,8],[1,7]"], cwd=folder, check=True, capture_output=True)
    return folder


def test_regenerated_code_matches_upstream_generated_code(upstream, tmp_path, monkeypatch, capsys):
    out = tmp_path / "ours_pnnx.py"
    assert main_regenerate([str(upstream / "tiny.pnnx.param"), f"pnnxpy={out}"]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    monkeypatch.chdir(upstream)  # upstream's file opens 'tiny.pnnx.bin' relative to the CWD
    theirs = import_file(upstream / "tiny_pnnx.py").test_inference()
    monkeypatch.chdir(tmp_path)  # ours finds pnnx.bin from its own location
    ours = import_file(out).test_inference()
    assert isinstance(ours, tuple) and len(ours) == 3
    assert_bitwise(ours, theirs)


def test_regenerated_code_follows_upstream_conventions(upstream, tmp_path):
    out = tmp_path / "ours_pnnx.py"
    assert main_regenerate([str(upstream / "tiny.pnnx.param"), f"pnnxpy={out}"]) == 0
    ours, theirs = out.read_text(), (upstream / "tiny_pnnx.py").read_text()
    for line in ("    torch.manual_seed(0)", "    v_0 = torch.rand(1, 3, 8, 8, dtype=torch.float)",
                 "    v_1 = torch.rand(1, 7, dtype=torch.float)", "    return net(v_0, v_1)",
                 "@torch.no_grad()", "def export_torchscript():", "def export_onnx():"):
        assert line in ours and line in theirs
    assert "self.lstm.weight_hh_l0 = self.load_pnnx_bin_as_parameter(archive, 'lstm.weight_hh_l0', (24, 6), 'float32')" in ours
    assert " = self.lstm(" in ours and ", _ = self.lstm(" in ours
    # a deliberate difference: upstream's member is `self.scale_data`; ours is named after
    # the operator, so that converting the generated file again keeps the name `scale`
    assert "self.scale_data = self.load_pnnx_bin_as_parameter(archive, 'scale.data', (1,5,), 'float32')" in theirs
    assert "self.scale = self.load_pnnx_bin_as_parameter(archive, 'scale.data', (1, 5), 'float32')" in ours
