"""Issue 19, items 1, 3-5 and torchvision's operators: what `pnnxref model.pt` takes as its
example inputs (the shapes the trace recorded, `input=a.npy`, `inputshape`), the one line it
prints for a wrong count, loading files that name torchvision's operators, and no Python
warnings on the way."""
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn as nn

from pnnx_reference.cli import main
from pnnx_reference.formats import pnnx_param


class TwoInputs(nn.Module):
    def forward(self, x, index):
        return x * 2 + index.float().unsqueeze(-1)


def trace(model, inputs, path: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(model.eval(), inputs, check_trace=False).save(str(path))
    return path


def input_annotations(param: Path) -> list[str]:
    graph = pnnx_param.load_text(param)
    return [f"{op.outputs[0].shape}{op.outputs[0].dtype}" for op in graph.ops if op.type == "pnnx.Input"]


def _error(argv, capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 and len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    return err


def test_without_inputshape_the_traced_shapes_and_dtypes_are_used(tmp_path, capsys):
    pt = trace(TwoInputs(), (torch.rand(2, 5, 3), torch.ones(2, 5, dtype=torch.int64)), tmp_path / "two.pt")
    assert main([str(pt)]) == 0, capsys.readouterr().err
    assert input_annotations(tmp_path / "two.pnnx.param") == ["[2, 5, 3]f32", "[2, 5]i64"]
    err = capsys.readouterr().err
    assert "model inputshape = [2,5,3]f32,[2,5]i64" in err  # upstream's stat lines, on its stream


class UnevenChunks(nn.Module):
    def forward(self, x):
        return torch.chunk(x, 3, dim=-1)


def test_the_recorded_inputs_are_read_not_rerun(tmp_path):
    """torch.jit.load(_restore_shapes=True) re-runs the module on the recorded inputs, whose data
    the file does not hold: a traced uneven torch.chunk aborted the process (munmap_chunk())."""
    pt = trace(UnevenChunks(), (torch.rand(2, 4, 13),), tmp_path / "chunk.pt")
    done = subprocess.run([sys.executable, "-m", "pnnx_reference.cli", str(pt)], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert input_annotations(tmp_path / "chunk.pnnx.param") == ["[2, 4, 13]f32"]


def test_inputshape_still_wins_over_the_traced_shapes(tmp_path, capsys):
    pt = trace(TwoInputs(), (torch.rand(2, 5, 3), torch.ones(2, 5, dtype=torch.int64)), tmp_path / "two.pt")
    assert main([str(pt), "inputshape=[1,4,3],[1,4]i64"]) == 0, capsys.readouterr().err
    assert input_annotations(tmp_path / "two.pnnx.param") == ["[1, 4, 3]f32", "[1, 4]i64"]


@pytest.mark.parametrize("shapes, count", [("[2,5,3]", 1), ("[2,5,3],[2,5]i64,[4]", 3)])
def test_a_wrong_input_count_is_one_line_naming_the_count(tmp_path, capsys, shapes, count):
    pt = trace(TwoInputs(), (torch.rand(2, 5, 3), torch.ones(2, 5, dtype=torch.int64)), tmp_path / "two.pt")
    err = _error([str(pt), f"inputshape={shapes}"], capsys)
    assert "takes 2 input tensors" in err and f"inputshape gives {count}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two.pt"]  # nothing written


def test_a_scripted_file_without_shapes_asks_for_inputshape(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(nn.Sequential(nn.ReLU())).save(str(tmp_path / "s.pt"))
    err = _error([str(tmp_path / "s.pt")], capsys)
    assert "records no input shapes" in err and "inputshape=" in err


def test_python_models_name_both_ways_to_give_inputs(capsys):
    err = _error(["torchvision.models:resnet18"], capsys)
    assert "inputshape=" in err and "input=" in err and ".pt" not in err


def test_npy_inputs_give_shapes_dtypes_and_values(tmp_path, capsys):
    pt = trace(TwoInputs(), (torch.rand(2, 5, 3), torch.ones(2, 5, dtype=torch.int64)), tmp_path / "two.pt")
    np.save(tmp_path / "a.npy", np.random.default_rng(0).random((3, 4, 3), dtype=np.float32))
    np.save(tmp_path / "b.npy", np.arange(12, dtype=np.int64).reshape(3, 4))
    np.save(tmp_path / "c.npy", np.zeros((5, 4, 3), np.float32))
    np.save(tmp_path / "d.npy", np.zeros((5, 4), np.int64))
    argv = [str(pt), f"input={tmp_path / 'a.npy'},{tmp_path / 'b.npy'}",
            f"input2={tmp_path / 'c.npy'},{tmp_path / 'd.npy'}"]
    assert main(argv) == 0, capsys.readouterr().err
    assert input_annotations(tmp_path / "two.pnnx.param") == ["[-1, 4, 3]f32", "[-1, 4]i64"]
    assert "model inputshape = [?,4,3]f32,[?,4]i64" in capsys.readouterr().err


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such file"),
    (lambda p: np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True), "not a readable .npy array"),
    (lambda p: p.write_bytes(b"not an array"), "not a readable .npy array"),
])
def test_bad_npy_files_are_one_line(tmp_path, capsys, make, message):
    pt = trace(nn.ReLU(), (torch.rand(2, 3),), tmp_path / "r.pt")
    make(tmp_path / "x.npy")
    assert message in _error([str(pt), f"input={tmp_path / 'x.npy'}"], capsys)


def test_inputshape_and_npy_must_agree(tmp_path, capsys):
    pt = trace(nn.ReLU(), (torch.rand(2, 3),), tmp_path / "r.pt")
    np.save(tmp_path / "x.npy", np.zeros((4, 3), np.float32))
    assert "disagree" in _error([str(pt), f"input={tmp_path / 'x.npy'}", "inputshape=[2,3]"], capsys)


TORCHVISION_MODEL = """
import torch, torchvision
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = torch.nn.Conv2d(4, 18, 3, padding=1)
        self.deform = torchvision.ops.DeformConv2d(4, 8, 3, padding=1)
    def forward(self, x, boxes):
        y = self.deform(x, self.offset(x))
        return y, torchvision.ops.roi_align(y, boxes, (3, 3), 0.5, 2, True)
torch.manual_seed(0)
torch.jit.trace(M().eval(), (torch.rand(1, 4, 8, 8), torch.tensor([[0, 1., 1., 5., 6.]]))).save({path!r})
"""

CONVERT_FRESH = """
import sys
from pnnx_reference.cli import main
assert "torchvision" not in sys.modules
sys.exit(main([{path!r}]))
"""


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "default", "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_torchvision_operators_load_in_a_fresh_process(tmp_path):
    pytest.importorskip("torchvision")
    pt = tmp_path / "tv.pt"
    assert _python(TORCHVISION_MODEL.format(path=str(pt)), tmp_path).returncode == 0
    done = _python(CONVERT_FRESH.format(path=str(pt)), tmp_path)
    assert done.returncode == 0, done.stderr
    types = [op.type for op in pnnx_param.load_text(tmp_path / "tv.pnnx.param").ops]
    assert "torchvision.ops.deform_conv2d" in types and "pnnx.custom_op.torchvision.roi_align" in types


@pytest.mark.slow
def test_the_pt_route_prints_no_python_warnings(tmp_path):
    """Item 5: with every warning shown (-W default), stderr holds only our own lines."""
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Upsample(scale_factor=2), nn.Flatten(2),
                          nn.TransformerEncoderLayer(144, 2, 8, batch_first=True))
    pt = trace(model, (torch.rand(1, 3, 8, 8),), tmp_path / "m.pt")
    done = _python(f"import sys\nfrom pnnx_reference.cli import main\nsys.exit(main([{str(pt)!r}]))", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    ours = ("warning: ", "selfcheck: ", "model inputshape = ", "FLOPS = ", "memory OPS = ")
    assert all(line.startswith(ours) for line in done.stderr.splitlines()), done.stderr
