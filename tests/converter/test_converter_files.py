"""Writing the artefacts (issue 20, item 5): every file is written beside its target under a
staging folder and moved into place only when all are written (and the self-check passed); a
failure leaves no new file and no folder the run made, and says so in one line. Generated
files get the mode any new file of the user gets (the umask), `_pnnx.py` included."""
from __future__ import annotations

import errno
import importlib.util
import os
import sys

import pytest
import torch
import torch.nn as nn

from pnnx_reference import api
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.emit.python.pnnx_py import regenerate
from pnnx_reference.errors import ConversionError

ARTEFACTS = ["m.ncnn.bin", "m.ncnn.param", "m.pnnx.bin", "m.pnnx.onnx", "m.pnnx.param", "m_ncnn.py", "m_pnnx.py"]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)) + 1


def _export(out, **kw):
    torch.manual_seed(0)
    return api.export(Net().eval(), torch.rand(1, 3, 8, 8), out, "m", **kw)


def _tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def umask():
    def set_mask(mask):
        previous = os.umask(mask)
        restore.append(previous)
    restore = []
    yield set_mask
    for mask in restore[:1]:
        os.umask(mask)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_every_artefact_gets_the_users_new_file_mode(tmp_path, umask, mask, mode):
    umask(mask)
    result = _export(tmp_path)
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in result.paths.values()} == \
        {name: oct(mode) for name in ARTEFACTS}
    again = regenerate(result.paths["pnnxparam"], tmp_path / "again_pnnx.py")
    assert oct(again.stat().st_mode & 0o777) == oct(mode)  # regenerate's _pnnx.py too (was 0600)


def test_a_failing_emitter_leaves_nothing_and_keeps_what_was_there(tmp_path, monkeypatch):
    (tmp_path / "m.pnnx.param").write_text("the user's previous file\n")

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(args[1]))

    monkeypatch.setattr(api, "write_ncnn", disk_full)  # the last emitter: the others have written
    with pytest.raises(ConversionError, match=rf"^{tmp_path}/m\.ncnn\.param: cannot write: No space left on device$"):
        _export(tmp_path)
    assert _tree(tmp_path) == ["m.pnnx.param"]
    assert (tmp_path / "m.pnnx.param").read_text() == "the user's previous file\n"


def test_an_unwritable_target_fails_before_any_file_and_removes_folders_it_made(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(ConversionError, match=r"a_file: cannot write: Not a directory$"):
        _export(tmp_path / "new" / "deeper", pnnxbin=tmp_path / "a_file" / "m.pnnx.bin")
    assert _tree(tmp_path) == ["a_file"]


def test_a_target_that_is_a_folder_is_refused(tmp_path):
    (tmp_path / "m.pnnx.onnx").mkdir()
    with pytest.raises(ConversionError, match=r"m\.pnnx\.onnx: cannot write: is a folder$"):
        _export(tmp_path)
    assert _tree(tmp_path) == ["m.pnnx.onnx"]


def test_the_command_line_says_it_in_one_line(tmp_path, capsys):
    model = tmp_path / "net.py"
    model.write_text("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                     "        return x.relu()\n")
    (tmp_path / "a_file").write_text("")
    assert pnnxref([str(model), "inputshape=[1,3]", f"ncnnparam={tmp_path / 'a_file' / 'x.param'}"]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'a_file'}: cannot write: Not a directory\n"
    assert _tree(tmp_path) == ["a_file", "net.py"]


def _load(py_path):
    spec = importlib.util.spec_from_file_location("files_generated", py_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        return module.Model().eval()
    finally:
        sys.modules.pop(spec.name)


def test_files_in_other_folders_refer_to_each_other_by_their_final_paths(tmp_path):
    result = _export(tmp_path / "py", pnnxbin=tmp_path / "weights" / "w.pnnx.bin",
                     ncnnparam=tmp_path / "ncnn" / "n.param", ncnnbin=tmp_path / "ncnn" / "n.bin")
    assert result.self_check.startswith("passed")
    pnnx_py, ncnn_py = result.paths["pnnxpy"].read_text(), result.paths["ncnnpy"].read_text()
    assert "'../weights/w.pnnx.bin'" in pnnx_py and ".pnnxref-" not in pnnx_py + ncnn_py
    assert repr(str((tmp_path / "ncnn" / "n.param").resolve())) in ncnn_py
    torch.manual_seed(0)
    original, x = Net().eval(), torch.rand(1, 3, 8, 8)
    torch.testing.assert_close(_load(result.paths["pnnxpy"])(x), original(x))
    assert not [p for p in _tree(tmp_path) if ".pnnxref-" in p]


class Bessel(nn.Module):
    def forward(self, x):
        return torch.special.bessel_j0(x) * 3  # neither ONNX nor ncnn lowers it


def test_an_artefact_this_run_does_not_write_does_not_survive_from_an_earlier_run(tmp_path, capsys):
    """Issue 33 item 1: the earlier run's ncnn and ONNX files described the earlier model."""
    _export(tmp_path)
    model = tmp_path / "m.py"
    model.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.special.bessel_j0(x) * 3\n")
    assert pnnxref([str(model), "inputshape=[1,3,8,8]"]) == 0
    err = capsys.readouterr().err
    gone = ["m.ncnn.bin", "m.ncnn.param", "m.pnnx.onnx", "m_ncnn.py"]
    assert _tree(tmp_path) == sorted(set(ARTEFACTS) - set(gone) | {"m.py"})
    for name in gone:
        assert f"warning: removed {tmp_path / name}: an earlier run wrote it" in err


def test_a_failed_run_removes_no_earlier_file(tmp_path):
    _export(tmp_path)
    with pytest.raises(ConversionError, match="changes rank"):
        api.export(Bessel(), torch.rand(1, 3), tmp_path, "m", inputs2=torch.rand(2, 3, 4, 5, 6, 7, 8, 9, 10))
    assert _tree(tmp_path) == ARTEFACTS


@pytest.mark.parametrize("paths", [dict(pnnxparam="same.param", ncnnparam="same.param"),
                                   dict(pnnxbin="net.ncnn.bin")])
def test_two_artefacts_at_one_path_are_refused(tmp_path, monkeypatch, capsys, paths):
    """Issue 33 item 11: one would silently overwrite the other."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.py").write_text("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n"
                                     "        return x.relu()\n")
    argv = ["net.py", "inputshape=[1,3]"] + [f"{k}={v}" for k, v in paths.items()]
    assert pnnxref(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "name the same file; give each artefact its own path" in err
    assert len(err.splitlines()) == 1 and _tree(tmp_path) == ["net.py"]
