"""A `.pt` that is not what it seems (issue 33 items 3, 9): a torch.save checkpoint, or a
tensor record cut short inside a valid zip (torch.jit.load fills the rest with whatever
memory holds). One line naming the file and what is wrong; nothing written."""
import zipfile

import pytest
import torch
import torch.nn as nn

from pnnx_reference.cli import main

from test_ts_cli import save_traced


def _refused(argv, tmp_path, capsys, before):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    return err


def _truncated_copy(good, bad, keep: int):
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(bad, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, data[:keep] if "/data/" in info.filename and len(data) > keep else data)


def test_a_truncated_weight_record_is_named(tmp_path, capsys):
    good = save_traced(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()), (1, 3, 8, 8), tmp_path / "good.pt")
    _truncated_copy(good, tmp_path / "bad.pt", 16)
    good.unlink()
    err = _refused([str(tmp_path / "bad.pt")], tmp_path, capsys, ["bad.pt"])
    assert err == (f"error: {tmp_path / 'bad.pt'}: the tensor record good/data/0 holds 16 bytes where its tensor "
                   "needs 432: the file is damaged (truncated)\n")


@pytest.mark.parametrize("what", ["state_dict", "module"])
def test_a_torch_save_checkpoint_is_not_torchscript(tmp_path, capsys, what):
    conv = nn.Conv2d(3, 4, 3)
    torch.save(conv.state_dict() if what == "state_dict" else conv, tmp_path / "ckpt.pt")
    err = _refused([str(tmp_path / "ckpt.pt"), "inputshape=[1,3,8,8]"], tmp_path, capsys, ["ckpt.pt"])
    assert "ckpt.pt: a torch.save file (a state dict or a pickled module), not TorchScript: load it into" in err


def test_an_intact_file_still_converts(tmp_path, capsys):
    good = save_traced(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()), (1, 3, 8, 8), tmp_path / "good.pt")
    assert main([str(good)]) == 0, capsys.readouterr().err
